//! Lowering of deparsers and checksum controls.

use super::*;

impl<'a> Lower<'a> {
    pub(super) fn lower_deparser(&mut self, d: &'a Decl) {
        let Decl::Control {
            params,
            apply,
            locals,
            ..
        } = d
        else {
            return; // reported by sema::structure::v1switch
        };
        self.scopes.push(HashMap::new());
        self.bind_block_params(params);
        self.ctx = Ctx::Deparser;
        for l in locals {
            if let Local::Var(s) = l {
                self.err(
                    s.span,
                    "local declarations in the deparser are not supported",
                );
            }
        }
        let mut order = vec![];
        self.deparse_stmts(apply, &mut order);
        self.ir.deparser = order;
        self.scopes.pop();
    }

    pub(super) fn deparse_stmts(&mut self, stmts: &[Stmt], order: &mut Vec<String>) {
        for s in stmts {
            match &s.kind {
                StmtKind::Call(c) => {
                    let ExprKind::Call(f, _, args) = &c.kind else {
                        continue;
                    };
                    if let ExprKind::Member(b, m) = &f.kind {
                        if let ExprKind::Name(n) = &b.kind {
                            if matches!(self.lookup(n), Some(Bind::PacketOut)) && m == "emit" {
                                if args.len() != 1 {
                                    // sema::bodies counts the arguments of packet methods
                                    self.internal(
                                        c.span,
                                        "emit with an unchecked argument count (sema counts them)",
                                    );
                                    continue;
                                }
                                match self.place(&args[0].value) {
                                    Ok(p) => self.emit_place(&p, order),
                                    Err(e) => self.sink.push(e),
                                }
                                continue;
                            }
                        }
                    }
                    self.err(
                        s.span,
                        "only packet.emit(...) calls are supported in the deparser",
                    );
                }
                StmtKind::Block(v) => self.deparse_stmts(v, order),
                StmtKind::Empty => {}
                StmtKind::If(..) => self.err(
                    s.span,
                    "conditional emits are not needed: emit skips invalid headers",
                ),
                _ => self.err(
                    s.span,
                    "only packet.emit(...) calls are supported in the deparser",
                ),
            }
        }
    }

    pub(super) fn emit_place(&mut self, p: &Place, order: &mut Vec<String>) {
        match p {
            Place::Header { inst, .. } => {
                if !order.contains(inst) {
                    order.push(inst.clone())
                }
            }
            Place::Stack { name, size, .. } => {
                for i in 0..*size {
                    let n = format!("{}[{}]", name, i);
                    if !order.contains(&n) {
                        order.push(n);
                    }
                }
            }
            Place::Struct { members, .. } | Place::Union { members, .. } => {
                for (_, m) in members {
                    if !matches!(m, Place::Field { .. }) {
                        self.emit_place(m, order);
                    }
                }
            }
            Place::UnionStack { elems, .. } => {
                for e in elems {
                    self.emit_place(e, order);
                }
            }
            Place::Field { .. }
            | Place::DynHeader { .. }
            | Place::DynField { .. }
            | Place::Slice { .. } => {}
        }
    }

    pub(super) fn lower_checksum_ctl(&mut self, d: &'a Decl, verify: bool) {
        let Decl::Control { params, apply, .. } = d else {
            return; // reported by sema::structure::v1switch
        };
        self.scopes.push(HashMap::new());
        self.bind_block_params(params);
        self.ctx = Ctx::Checksum;
        self.checksum_stmts(apply, verify);
        self.scopes.pop();
    }

    pub(super) fn checksum_stmts(&mut self, stmts: &[Stmt], verify: bool) {
        for s in stmts {
            match &s.kind {
                StmtKind::Call(c) => {
                    let ExprKind::Call(f, _, args) = &c.kind else {
                        continue;
                    };
                    let fname = match &f.kind {
                        ExprKind::Name(n) => n.as_str(),
                        _ => "",
                    };
                    let (is_verify, payload) = match fname {
                        "verify_checksum" => (true, false),
                        "verify_checksum_with_payload" => (true, true),
                        "update_checksum" => (false, false),
                        "update_checksum_with_payload" => (false, true),
                        _ => {
                            self.err(c.span, "only verify_checksum/update_checksum calls are supported in checksum controls");
                            continue;
                        }
                    };
                    if is_verify != verify {
                        self.err(
                            c.span,
                            format!(
                                "{} cannot be used in the {} checksum control",
                                fname,
                                if verify { "verify" } else { "compute" }
                            ),
                        );
                        continue;
                    }
                    if let Err(e) = self.checksum_call(c.span, args, verify, payload) {
                        self.sink.push(e);
                    }
                }
                StmtKind::Block(v) => self.checksum_stmts(v, verify),
                StmtKind::Empty => {}
                _ => self.err(
                    s.span,
                    "only verify_checksum/update_checksum calls are supported in checksum controls",
                ),
            }
        }
    }

    pub(super) fn checksum_call(
        &mut self,
        span: Span,
        args: &[Arg],
        verify: bool,
        payload: bool,
    ) -> PResult<()> {
        if args.len() != 4 {
            return Err(Error::new(
                span,
                "internal compiler error: checksum function's argument count (not checked by sema::bodies)",
            ));
        }
        let (cond, ct) = self.rv(&args[0].value, Some(&Type::Bool))?;
        if ct != Type::Bool {
            return Err(Error::new(
                args[0].value.span,
                "internal compiler error: checksum condition must be bool (checked by sema::exprs)",
            ));
        }
        let mut inputs = self.field_list_inputs(&args[1].value)?;
        if payload {
            inputs.push(CalcInput::Payload);
        }
        let algo = self.algo_name(&args[3].value)?;
        let target = match self.place(&args[2].value)? {
            Place::Field { hdr, field, .. } => (hdr, field),
            _ => return Err(Error::new(
                args[2].value.span,
                "a checksum target with a run-time stack index is not supported by this compiler",
            )),
        };
        let cname = self.add_calculation(algo, inputs);
        let id = self.ir.checksums.len();
        self.ir.checksums.push(Checksum {
            id,
            target,
            calculation: cname,
            verify,
            cond: (cond != X::Bool(true)).then_some(cond),
        });
        Ok(())
    }

    /// A new calculation of `algo` over `inputs`; returns its name.
    pub(super) fn add_calculation(&mut self, algo: String, inputs: Vec<CalcInput>) -> String {
        let id = self.ir.calculations.len();
        let name = format!("calc_{}", id);
        self.ir.calculations.push(Calculation {
            name: name.clone(),
            id,
            algo,
            inputs,
        });
        name
    }

    pub(super) fn algo_name(&mut self, e: &Expr) -> PResult<String> {
        match &e.kind {
            ExprKind::Member(b, m) if matches!(&b.kind, ExprKind::Name(n) if n == "HashAlgorithm") => {
                Ok(match m.as_str() {
                    "crc32" | "crc16" | "csum16" | "identity" | "xor16" | "random"
                    | "crc32_custom" | "crc16_custom" => m.clone(),
                    _ => {
                        // sema::bodies checks HashAlgorithm's members; all are listed here
                        return Err(Error::new(
                            e.span,
                            format!("internal compiler error: unknown hash algorithm '{}' (not checked by sema::bodies)", m),
                        ))
                    }
                })
            }
            _ => Err(Error::new(
                e.span,
                "internal compiler error: hash algorithm of another shape (not checked by sema::bodies)",
            )),
        }
    }

    /// Fields of a `{...}` list or a struct/header value, as calculation inputs.
    pub(super) fn field_list_inputs(&mut self, e: &Expr) -> PResult<Vec<CalcInput>> {
        let mut out = vec![];
        self.flatten_inputs(e, &mut out)?;
        Ok(out)
    }

    pub(super) fn flatten_inputs(&mut self, e: &Expr, out: &mut Vec<CalcInput>) -> PResult<()> {
        if let ExprKind::List(items) = &e.kind {
            for (_, it) in items {
                self.flatten_inputs(it, out)?;
            }
            return Ok(());
        }
        if let Ok(p) = self.place(e) {
            if matches!(p, Place::DynHeader { .. } | Place::DynField { .. }) {
                return Err(Error::new(
                    e.span,
                    "header stack elements with a run-time index cannot be used in field lists",
                ));
            }
            self.flatten_place(&p, out);
            return Ok(());
        }
        if let ExprKind::Name(n) = &e.kind {
            if let Some(Bind::Val(X::Field(h, f), _)) = self.lookup(n) {
                out.push(CalcInput::Field(h, f));
                return Ok(());
            }
        }
        let locals = self.const_locals();
        match self.env.const_eval(e, &locals) {
            Ok((v, t)) => {
                let w = match t.width() {
                    Some(w) => w,
                    None => {
                        return Err(Error::new(
                            e.span,
                            "constants in a field list need a width, e.g. 8w0",
                        ))
                    }
                };
                out.push(CalcInput::Const(v, w));
                Ok(())
            }
            Err(_) => Err(Error::new(
                e.span,
                "field list elements must be fields, headers or sized constants",
            )),
        }
    }

    pub(super) fn flatten_place(&mut self, p: &Place, out: &mut Vec<CalcInput>) {
        match p {
            Place::DynHeader { .. } | Place::DynField { .. } | Place::Slice { .. } => {}
            Place::Field { hdr, field, .. } => {
                out.push(CalcInput::Field(hdr.clone(), field.clone()))
            }
            Place::Header { inst, ty } => {
                if let Some(c) = self.env.composite(ty) {
                    for (f, _, _) in &c.fields {
                        out.push(CalcInput::Field(inst.clone(), f.clone()));
                    }
                }
            }
            Place::Struct { members, .. } | Place::Union { members, .. } => {
                for (_, m) in members.clone() {
                    self.flatten_place(&m, out);
                }
            }
            Place::Stack { name, size, elem } => {
                for i in 0..*size {
                    let ph = Place::Header {
                        inst: format!("{}[{}]", name, i),
                        ty: elem.clone(),
                    };
                    self.flatten_place(&ph, out);
                }
            }
            Place::UnionStack { elems, .. } => {
                for e in elems.clone() {
                    self.flatten_place(&e, out);
                }
            }
        }
    }
}
