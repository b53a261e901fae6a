//! Lowering of instances: headers, metadata, scalars and the places that name them.

use super::*;

impl<'a> Lower<'a> {
    pub(super) fn add_header_type(&mut self, tname: &str, pad: bool) {
        if self.header_type_set.contains(tname) {
            return;
        }
        self.header_type_set.insert(tname.to_string());
        let def = match self.env.composite(tname) {
            Some(d) => d.clone(),
            None => return,
        };
        let mut fields = vec![];
        let mut total = 0;
        for (n, t, _) in &def.fields {
            let fw = match t {
                Type::Varbit(w) => FieldW::Var(*w),
                Type::Int(w) => FieldW::Fixed(*w, true),
                t => FieldW::Fixed(t.width().unwrap_or(0), false),
            };
            if let FieldW::Fixed(w, _) = fw {
                total += w;
            }
            fields.push((n.clone(), fw));
        }
        if pad && total % 8 != 0 {
            fields.push(("_padding".into(), FieldW::Fixed(8 - total % 8, false)));
        }
        self.ir.header_types.push(HeaderType {
            name: tname.to_string(),
            fields,
        });
    }

    pub(super) fn add_header(&mut self, name: &str, ty: &str, metadata: bool) -> usize {
        let mut n = name.to_string();
        let mut k = 0;
        while self.header_names.contains(&n) || n == "scalars" || n == "standard_metadata" {
            k += 1;
            n = format!("{}_{}", name, k);
        }
        self.header_names.insert(n.clone());
        self.add_header_type(ty, metadata);
        self.ir.headers.push(HeaderInst {
            name: n,
            ty: ty.to_string(),
            metadata,
        });
        self.ir.headers.len() // index after scalars insertion (+1 applied: scalars is id 0)
    }

    pub(super) fn scalar(&mut self, name: &str, ty: &Type) -> Place {
        let mut n = name.to_string();
        let mut k = 0;
        while self.scalar_names.contains(&n) {
            k += 1;
            n = format!("{}_{}", name, k);
        }
        self.scalar_names.insert(n.clone());
        let fw = match ty {
            Type::Int(w) => FieldW::Fixed(*w, true),
            Type::Varbit(w) => FieldW::Var(*w),
            t => FieldW::Fixed(t.width().unwrap_or(32).max(1), false),
        };
        self.scalar_fields.push((n.clone(), fw));
        Place::Field {
            hdr: "scalars".into(),
            field: n,
            ty: ty.clone(),
        }
    }

    pub(super) fn make_std_meta(&mut self) {
        let def = match self.env.composite("standard_metadata_t") {
            Some(d) => d.clone(),
            None => return,
        };
        let mut fields = vec![];
        let mut total = 0;
        let mut members = vec![];
        for (n, t, annos) in &def.fields {
            let w = t.width().unwrap_or(32);
            total += w;
            fields.push((n.clone(), FieldW::Fixed(w, false)));
            members.push((
                n.clone(),
                Place::Field {
                    hdr: "standard_metadata".into(),
                    field: n.clone(),
                    ty: t.clone(),
                },
            ));
            if let Some(a) = anno_str(annos, "alias") {
                self.ir
                    .field_aliases
                    .push((a, "standard_metadata".into(), n.clone()));
            }
        }
        if total % 8 != 0 {
            fields.push(("_padding".into(), FieldW::Fixed(8 - total % 8, false)));
        }
        self.ir.header_types.push(HeaderType {
            name: "standard_metadata".into(),
            fields,
        });
        self.ir.headers.push(HeaderInst {
            name: "standard_metadata".into(),
            ty: "standard_metadata".into(),
            metadata: true,
        });
        self.root_places.insert(
            "standard_metadata_t".into(),
            Place::Struct {
                ty: "standard_metadata_t".into(),
                members,
            },
        );
    }

    /// Create storage for a value of type `ty`; `hname` names headers, `sname` scalar fields.
    /// Binds local variable `n` of block `owner` to new metadata named after both.
    pub(super) fn bind_local(&mut self, owner: &str, n: &str, t: Type) {
        let p = self.make_place(
            "",
            &format!("{}.{}", owner, n),
            t,
            true,
            &format!("{}_{}", owner, n),
        );
        self.bind(n, Bind::Place(p));
    }

    /// Name of the control (or parser) being lowered.
    pub(super) fn ctl_name(&self) -> String {
        self.ctl
            .as_ref()
            .map(|c| c.name.clone())
            .unwrap_or_default()
    }

    pub(super) fn make_place(
        &mut self,
        _tyname: &str,
        sname: &str,
        ty: Type,
        meta: bool,
        hname: &str,
    ) -> Place {
        if self.ir.headers.len() + self.scalar_fields.len() > 100_000 {
            if !self.too_big {
                self.too_big = true;
                self.err(
                    Span::default(),
                    "the program declares more than 100000 header instances and metadata fields",
                );
            }
            return Place::Struct {
                ty: String::new(),
                members: vec![],
            };
        }
        match &ty {
            Type::Struct(n) => {
                let def = match self.env.composite(n) {
                    Some(d) => d.clone(),
                    None => {
                        return Place::Struct {
                            ty: n.clone(),
                            members: vec![],
                        }
                    }
                };
                let mut members = vec![];
                for (f, ft, _) in &def.fields {
                    let sn = if sname.is_empty() {
                        f.clone()
                    } else {
                        format!("{}.{}", sname, f)
                    };
                    let hn = if hname.is_empty() {
                        f.clone()
                    } else {
                        format!("{}_{}", hname, f)
                    };
                    let p = self.make_place(n, &sn, ft.clone(), meta, &hn);
                    members.push((f.clone(), p));
                }
                Place::Struct {
                    ty: n.clone(),
                    members,
                }
            }
            Type::Header(h) => {
                let hn = if hname.is_empty() { sname } else { hname };
                self.add_header(hn, h, false);
                let inst = self.ir.headers.last().unwrap().name.clone();
                Place::Header {
                    inst,
                    ty: h.clone(),
                }
            }
            // a tuple is a struct whose members are named by position
            Type::Tuple(ts) => {
                let mut members = vec![];
                for (i, t) in ts.iter().enumerate() {
                    let p = self.make_place(
                        "",
                        &format!("{}.{}", sname, i),
                        t.clone(),
                        meta,
                        &format!("{}_{}", hname, i),
                    );
                    members.push((i.to_string(), p));
                }
                Place::Struct {
                    ty: ty.name(),
                    members,
                }
            }
            Type::Union(u) => {
                let def = self.env.composite(u).cloned();
                let hn = if hname.is_empty() {
                    sname.to_string()
                } else {
                    hname.to_string()
                };
                let mut members = vec![];
                let mut ids = vec![];
                if let Some(def) = def {
                    for (f, ft, _) in &def.fields {
                        if let Type::Header(h) = ft {
                            let id = self.add_header(&format!("{}.{}", hn, f), h, false);
                            ids.push(id);
                            let inst = self.ir.headers.last().unwrap().name.clone();
                            members.push((
                                f.clone(),
                                Place::Header {
                                    inst,
                                    ty: h.clone(),
                                },
                            ));
                        }
                    }
                    if !self.ir.union_types.iter().any(|x| x.0 == *u) {
                        let ms = def
                            .fields
                            .iter()
                            .map(|(f, t, _)| (f.clone(), t.name()))
                            .collect();
                        self.ir.union_types.push((u.clone(), ms));
                    }
                }
                self.ir.unions.push((hn.clone(), u.clone(), ids));
                Place::Union {
                    name: hn,
                    ty: u.clone(),
                    members,
                }
            }
            Type::Stack(et, n) => {
                let hn = if hname.is_empty() {
                    sname.to_string()
                } else {
                    hname.to_string()
                };
                let elem = match &**et {
                    Type::Header(h) => h.clone(),
                    Type::Union(u) => {
                        let mut elems = vec![];
                        let mut ids = vec![];
                        for i in 0..*n {
                            let name = format!("{}[{}]", hn, i);
                            elems.push(self.make_place("", &name, (**et).clone(), meta, &name));
                            ids.push(self.ir.unions.len() - 1);
                        }
                        self.ir.union_stacks.push((hn.clone(), u.clone(), ids));
                        return Place::UnionStack {
                            name: hn,
                            ty: u.clone(),
                            elems,
                        };
                    }
                    _ => {
                        return Place::Stack {
                            name: hn,
                            elem: String::new(),
                            size: 0,
                        };
                    }
                };
                let mut ids = vec![];
                for i in 0..*n {
                    ids.push(self.add_header(&format!("{}[{}]", hn, i), &elem, false));
                }
                self.ir.stacks.push((hn.clone(), elem.clone(), ids));
                Place::Stack {
                    name: hn,
                    elem,
                    size: *n,
                }
            }
            _ => {
                let _ = meta;
                self.scalar(sname, &ty)
            }
        }
    }

    pub(super) fn bind_block_params(&mut self, params: &[Param]) {
        for p in params {
            let t = match self.env.resolve(&p.ty) {
                Ok(t) => t,
                Err(e) => {
                    self.sink.push(e);
                    continue;
                }
            };
            let b = match &t {
                Type::Extern(n) if n == "packet_in" => Bind::PacketIn,
                Type::Extern(n) if n == "packet_out" => Bind::PacketOut,
                Type::Struct(n) => match self.root_places.get(n) {
                    Some(p) => Bind::Place(p.clone()),
                    None => {
                        self.internal(p.span, format!("parameter '{}' of type {} is no root type (checked by sema::instances::block_params)", p.name, n));
                        continue;
                    }
                },
                _ => {
                    self.err(
                        p.span,
                        format!(
                            "unsupported parameter type {} for a v1model block",
                            t.name()
                        ),
                    );
                    continue;
                }
            };
            self.bind(&p.name, b);
        }
    }

    /// `C2(c1, 8) c2;`: the constructor arguments of a control instance, bound to the
    /// control's constructor parameters: another instance (a control to apply) or a
    /// compile-time constant.
    fn ctor_arg_binds(
        &mut self,
        inst: &Instance,
        tname: &str,
        ctor_params: &[Param],
    ) -> Vec<(String, Bind)> {
        if inst.args.len() != ctor_params.len() {
            self.internal(
                inst.span,
                format!(
                    "control '{}' instantiated with {} of its {} constructor argument(s) (checked by sema::instances::control_ctor_args)",
                    tname,
                    inst.args.len(),
                    ctor_params.len()
                ),
            );
            return vec![];
        }
        let mut binds = vec![];
        for (p, a) in ctor_params.iter().zip(&inst.args) {
            let b = match &a.value.kind {
                ExprKind::Name(n) if matches!(self.lookup(n), Some(Bind::Extern { .. })) => {
                    self.lookup(n)
                }
                _ => match self.env.resolve(&p.ty) {
                    Ok(t) => match self.const_expr(&a.value, Some(&t)) {
                        Ok(v) => Some(Bind::Const(v, t)),
                        Err(_) => None,
                    },
                    Err(e) => {
                        self.sink.push(e);
                        continue;
                    }
                },
            };
            match b {
                Some(b) => binds.push((p.name.clone(), b)),
                None => self.internal(
                    a.value.span,
                    format!(
                        "constructor argument '{}' is neither an instance nor a constant (checked by sema::instances::control_ctor_args)",
                        p.name
                    ),
                ),
            }
        }
        binds
    }

    pub(super) fn declare_instance(&mut self, inst: &Instance, prefix: &str) {
        // another application of a control instance declares its first application's externs
        let prefix = &self.owner_of(prefix);
        let tname = match &inst.ty {
            TypeRef::Named(n, _, _) => n.clone(),
            _ => {
                self.err(inst.span, "unsupported instantiation");
                return;
            }
        };
        let fq = if prefix.is_empty() {
            inst.name.clone()
        } else {
            format!("{}.{}", prefix, inst.name)
        };
        let fq = anno_str(&inst.annos, "name")
            .map(|n| {
                if let Some(s) = n.strip_prefix('.') {
                    s.to_string()
                } else if prefix.is_empty() {
                    n
                } else {
                    format!("{}.{}", prefix, n)
                }
            })
            .unwrap_or(fq);
        let int_arg = |l: &mut Lower, i: usize| -> u64 {
            match inst.args.get(i) {
                Some(a) => match l.env.const_eval(&a.value, &HashMap::new()) {
                    Ok((v, _)) => v as u64,
                    Err(e) => {
                        l.sink.push(e);
                        0
                    }
                },
                None => {
                    // sema::structure::instance_arguments counted them
                    l.internal(
                        inst.span,
                        format!(
                            "missing constructor argument for {} (sema counts them)",
                            tname
                        ),
                    );
                    0
                }
            }
        };
        let enum_arg = |i: usize| -> String {
            match inst.args.get(i).map(|a| &a.value.kind) {
                Some(ExprKind::Member(_, m)) => m.clone(),
                _ => String::new(),
            }
        };
        let kind: &str = match tname.as_str() {
            "counter" | "direct_counter" | "meter" | "direct_meter" | "register" => {
                let direct = tname.starts_with("direct");
                let size = if direct { 0 } else { int_arg(self, 0) };
                let unit = if tname == "register" {
                    String::new()
                } else {
                    enum_arg(if direct { 0 } else { 1 })
                };
                let bitwidth = if tname == "register" {
                    match &inst.ty {
                        TypeRef::Named(_, args, _) if !args.is_empty() => self
                            .env
                            .resolve(&args[0])
                            .ok()
                            .and_then(|t| t.width())
                            .unwrap_or(32),
                        _ => {
                            // sema::structure::instance_arguments checked it
                            self.internal(
                                inst.span,
                                "register without a type argument (sema checks it)",
                            );
                            32
                        }
                    }
                } else {
                    0
                };
                let k: &'static str = match tname.as_str() {
                    "counter" | "direct_counter" => "counter",
                    "meter" | "direct_meter" => "meter",
                    _ => "register",
                };
                if !self.ir.arrays.iter().any(|x| x.name == fq) {
                    self.ir.arrays.push(ExternArray {
                        kind: k,
                        name: fq.clone(),
                        size,
                        direct_table: None,
                        unit,
                        bitwidth,
                        result_target: None,
                        annos: inst.annos.clone(),
                    });
                }
                "array"
            }
            "action_profile" | "action_selector" => {
                let (size, sel) = if tname == "action_profile" {
                    (int_arg(self, 0), None)
                } else {
                    (int_arg(self, 1), Some((enum_arg(0), vec![])))
                };
                let pipe = self.ctl.as_ref().map(|c| c.pipe).unwrap_or(0);
                self.pipelines[pipe].profiles.push(Profile {
                    name: fq.clone(),
                    size,
                    selector: sel,
                    tables: vec![],
                    annos: inst.annos.clone(),
                });
                "profile"
            }
            "Checksum16" => "checksum16",
            _ => {
                // sub-parser / sub-control instance
                match self.find_decl(&tname) {
                    Some(Decl::Control { ctor_params, .. }) => {
                        let binds = self.ctor_arg_binds(inst, &tname, ctor_params);
                        self.ctor_binds.insert(fq.clone(), binds);
                        "sub"
                    }
                    Some(Decl::Parser { .. }) => "sub",
                    _ => {
                        self.err(inst.span, format!("unsupported extern or type '{}'", tname));
                        return;
                    }
                }
            }
        };
        let _ = kind;
        self.bind(
            &inst.name,
            Bind::Extern {
                kind: ExternKind::of_type(&tname),
                name: fq,
            },
        );
    }
}
