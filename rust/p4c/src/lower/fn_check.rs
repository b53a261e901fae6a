//! Type errors in functions no one calls. Lowering checks a function's body where it is
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
            let Decl::Function {
                name,
                ret,
                params,
                body,
                span,
                ..
            } = d
            else {
                continue;
            };
            if let Err(e) = self.check_function_body(name, ret, params, body, *span) {
                self.sink.push(e);
            }
        }
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
        self.scopes.push(HashMap::new());
        let mut args = vec![];
        for (i, p) in params.iter().enumerate() {
            let t = match self.env.resolve(&p.ty) {
                Ok(t) => t,
                Err(e) => {
                    self.scopes.pop();
                    return Err(e);
                }
            };
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
