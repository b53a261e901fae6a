//! Type errors in functions (and top-level actions) no one calls. Lowering checks a function's body where it is
//! inlined, so one that is never called would pass unchecked; p4c checks every
//! function. Each function is therefore also lowered once on its own, after the program
//! (its parameters bound to fresh locations), into scratch state that is thrown away:
//! only its errors count. An error already found at a call is not repeated (the sink
//! drops duplicates).

use super::*;

impl<'a> Lower<'a> {
    /// Lowers every function body on its own; call with the finished IR taken out.
    pub(super) fn check_function_bodies(&mut self) {
        self.pipelines = vec![Pipeline::default(), Pipeline::default()];
        self.ctl = Some(CtlInfo {
            name: String::new(),
            actions: HashMap::new(),
            tables: HashMap::new(),
            applied: HashSet::new(),
            pipe: 0,
            ret: None,
        });
        for d in self.prog.decls.iter() {
            let r = match d {
                Decl::Function {
                    name,
                    ret,
                    params,
                    body,
                    span,
                    ..
                } => self.check_function_body(name, ret, params, body, *span),
                Decl::Action(a) => self.check_global_action(a),
                _ => continue,
            };
            if let Err(e) = r {
                self.sink.push(e);
            }
        }
    }

    /// Fresh locations for `params`, bound in a new scope (popped by the caller), as
    /// the arguments of a call.
    fn fresh_args(&mut self, name: &str, params: &[Param]) -> PResult<Vec<Arg>> {
        self.scopes.push(HashMap::new());
        let mut args = vec![];
        for (i, p) in params.iter().enumerate() {
            let t = self.env.resolve(&p.ty)?;
            let n = format!("__check_{}_{}", name, i);
            let place = self.make_place("", &n, t, true, &n);
            self.bind(&n, Bind::Place(place));
            args.push(Arg {
                name: None,
                value: Expr {
                    kind: ExprKind::Name(n),
                    span: p.span,
                },
            });
        }
        Ok(args)
    }

    /// A top-level action, as if called with every parameter (action data too) given.
    fn check_global_action(&mut self, a: &Action) -> PResult<()> {
        let args = self.fresh_args(&a.name, &a.params);
        let saved_act = self.act.replace(ActionCtx {
            prims: vec![],
            returns: vec![],
        });
        self.ctx = Ctx::Action;
        let r = args.and_then(|args| self.inline_action(a, true, &args, a.span));
        self.act = saved_act;
        self.scopes.pop();
        r
    }

    fn check_function_body(
        &mut self,
        name: &str,
        ret: &TypeRef,
        params: &[Param],
        body: &[Stmt],
        span: Span,
    ) -> PResult<()> {
        let rt = self.env.resolve(ret)?;
        let args = match self.fresh_args(name, params) {
            Ok(a) => a,
            Err(e) => {
                self.scopes.pop();
                return Err(e);
            }
        };
        let call = Expr {
            kind: ExprKind::Call(
                Box::new(Expr {
                    kind: ExprKind::Name(name.to_string()),
                    span,
                }),
                vec![],
                args.clone(),
            ),
            span,
        };
        let saved_act = self.act.replace(ActionCtx {
            prims: vec![],
            returns: vec![],
        });
        self.ctx = Ctx::Action;
        let r = self.inline_function_body(&call, name, &rt, params, body, &args);
        self.act = saved_act;
        self.scopes.pop();
        r.map(|_| ())
    }
}
