//! Abstract syntax tree of a P4_16 program.

use crate::diag::Span;

#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub name: String,
    /// Expressions in parentheses, when they parse as such.
    pub args: Vec<Expr>,
    pub span: Span,
}

pub type Annos = Vec<Annotation>;

pub fn anno<'a>(a: &'a Annos, name: &str) -> Option<&'a Annotation> {
    a.iter().find(|x| x.name == name)
}

pub fn anno_str(a: &Annos, name: &str) -> Option<String> {
    anno(a, name).and_then(|x| match x.args.first().map(|e| &e.kind) {
        Some(ExprKind::Str(s)) => Some(s.clone()),
        Some(ExprKind::Int(v, _)) => Some(v.to_string()),
        _ => None,
    })
}

pub fn anno_int(a: &Annos, name: &str) -> Option<u128> {
    anno(a, name).and_then(|x| match x.args.first().map(|e| &e.kind) {
        Some(ExprKind::Int(v, _)) => Some(*v),
        _ => None,
    })
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeRef {
    Bit(Box<Expr>),
    Int(Box<Expr>),
    Varbit(Box<Expr>),
    Bool,
    Error,
    Str,
    Void,
    DontCare,
    /// Named type with optional type arguments.
    Named(String, Vec<TypeRef>, Span),
    /// Header stack `T[n]`.
    Stack(Box<TypeRef>, Box<Expr>),
    Tuple(Vec<TypeRef>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int(u128, Option<(u32, bool)>),
    Bool(bool),
    Str(String),
    Name(String),
    /// `.name` (top-level name).
    Member(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    Slice(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(Box<Expr>, Vec<TypeRef>, Vec<Arg>),
    Unary(&'static str, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    Cast(TypeRef, Box<Expr>),
    /// `{ a, b }` list / struct expression (with optional field names).
    List(Vec<(Option<String>, Expr)>),
    /// `a &&& b`
    Mask(Box<Expr>, Box<Expr>),
    /// `a .. b`
    Range(Box<Expr>, Box<Expr>),
    /// `default` or `_`
    Default,
    /// A type used as expression, e.g. in `T.minSizeInBits()`; rare.
    TypeExpr(TypeRef),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub name: Option<String>,
    pub value: Expr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    None,
    In,
    Out,
    InOut,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub annos: Annos,
    pub dir: Dir,
    pub ty: TypeRef,
    pub name: String,
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub annos: Annos,
    pub ty: TypeRef,
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Assign(Expr, Expr),
    Call(Expr),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    Block(Vec<Stmt>),
    /// switch (expr) { label: stmt ... }; a None body means fall through.
    Switch(Expr, Vec<SwitchCase>),
    Var(Annos, TypeRef, String, Option<Expr>),
    Const(TypeRef, String, Expr),
    Exit,
    Return(Option<Expr>),
    Empty,
    /// Instantiation inside a parser/control (locals only).
    Inst(Instance),
}

#[derive(Clone, Debug, PartialEq)]
pub struct SwitchCase {
    /// Label: action name or `default` (ExprKind::Default) or an expression.
    pub label: Expr,
    pub body: Option<Stmt>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    pub annos: Annos,
    pub ty: TypeRef,
    pub args: Vec<Arg>,
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParserState {
    pub annos: Annos,
    pub name: String,
    pub stmts: Vec<Stmt>,
    pub transition: Option<Transition>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Transition {
    Direct(String, Span),
    Select(Vec<Expr>, Vec<SelectCase>, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct SelectCase {
    /// One keyset expression per key (a single `default`/`_` covers all).
    pub keys: Vec<Expr>,
    pub next: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    pub annos: Annos,
    pub name: String,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct KeyElem {
    pub annos: Annos,
    pub expr: Expr,
    pub match_kind: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ActionRef {
    pub annos: Annos,
    pub name: String,
    pub args: Vec<Arg>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub annos: Annos,
    pub keys: Vec<Expr>,
    pub action: ActionRef,
    pub priority: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub annos: Annos,
    pub name: String,
    pub keys: Vec<KeyElem>,
    pub actions: Vec<ActionRef>,
    pub default_action: Option<(ActionRef, bool)>,
    pub entries: Option<(Vec<Entry>, bool)>,
    pub size: Option<Expr>,
    /// Other properties: name → expression (implementation, counters, meters, ...).
    pub props: Vec<(String, Expr, Span)>,
    pub span: Span,
}

impl Table {
    /// Every action the table names: its `actions` list, its default action and the
    /// actions of its `entries` (sema checks each of them, wherever it is named).
    pub fn action_refs(&self) -> impl Iterator<Item = &ActionRef> {
        self.actions
            .iter()
            .chain(self.default_action.iter().map(|d| &d.0))
            .chain(
                self.entries
                    .iter()
                    .flat_map(|e| e.0.iter().map(|en| &en.action)),
            )
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Local {
    Var(Stmt),
    Inst(Instance),
    Action(Action),
    Table(Table),
    ValueSet {
        annos: Annos,
        ty: TypeRef,
        size: Expr,
        name: String,
        span: Span,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Method {
    pub annos: Annos,
    pub ret: Option<TypeRef>,
    pub name: String,
    pub type_params: Vec<String>,
    pub params: Vec<Param>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Decl {
    Const {
        annos: Annos,
        ty: TypeRef,
        name: String,
        value: Expr,
        span: Span,
    },
    Typedef {
        annos: Annos,
        ty: TypeRef,
        name: String,
        newtype: bool,
        span: Span,
    },
    Header {
        annos: Annos,
        name: String,
        fields: Vec<Field>,
        span: Span,
    },
    HeaderUnion {
        annos: Annos,
        name: String,
        fields: Vec<Field>,
        span: Span,
    },
    Struct {
        annos: Annos,
        name: String,
        fields: Vec<Field>,
        span: Span,
    },
    Enum {
        annos: Annos,
        name: String,
        underlying: Option<TypeRef>,
        members: Vec<(String, Option<Expr>, Span)>,
        span: Span,
    },
    Error {
        members: Vec<(String, Span)>,
        span: Span,
    },
    MatchKind {
        members: Vec<(String, Span)>,
        span: Span,
    },
    Extern {
        annos: Annos,
        name: String,
        type_params: Vec<String>,
        methods: Vec<Method>,
        span: Span,
    },
    ExternFn(Method),
    Parser {
        annos: Annos,
        name: String,
        type_params: Vec<String>,
        params: Vec<Param>,
        ctor_params: Vec<Param>,
        locals: Vec<Local>,
        states: Vec<ParserState>,
        /// false for a parser type declaration (prototype)
        has_body: bool,
        span: Span,
    },
    Control {
        annos: Annos,
        name: String,
        type_params: Vec<String>,
        params: Vec<Param>,
        ctor_params: Vec<Param>,
        locals: Vec<Local>,
        apply: Vec<Stmt>,
        has_body: bool,
        span: Span,
    },
    Package {
        name: String,
        span: Span,
    },
    Instance(Instance),
    Action(Action),
    Function {
        annos: Annos,
        ret: TypeRef,
        name: String,
        params: Vec<Param>,
        body: Vec<Stmt>,
        span: Span,
    },
}

impl Decl {
    pub fn name(&self) -> Option<&str> {
        Some(match self {
            Decl::Const { name, .. }
            | Decl::Typedef { name, .. }
            | Decl::Header { name, .. }
            | Decl::HeaderUnion { name, .. }
            | Decl::Struct { name, .. }
            | Decl::Enum { name, .. }
            | Decl::Extern { name, .. }
            | Decl::Parser { name, .. }
            | Decl::Control { name, .. }
            | Decl::Package { name, .. }
            | Decl::Function { name, .. } => name,
            Decl::ExternFn(m) => &m.name,
            Decl::Instance(i) => &i.name,
            Decl::Action(a) => &a.name,
            Decl::Error { .. } | Decl::MatchKind { .. } => return None,
        })
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    pub decls: Vec<Decl>,
}

impl Program {
    /// The names of the top-level functions.
    pub fn function_names(&self) -> std::collections::HashSet<&str> {
        self.decls
            .iter()
            .filter_map(|d| match d {
                Decl::Function { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The top-level actions by name (a control's own actions shadow these).
    pub fn global_actions(&self) -> std::collections::HashMap<&str, &Action> {
        self.decls
            .iter()
            .filter_map(|d| match d {
                Decl::Action(a) => Some((a.name.as_str(), a)),
                _ => None,
            })
            .collect()
    }

    /// How many times each top-level function, action and extern function name is
    /// declared: a name declared more than once is overloaded (lowering picks one by its
    /// arguments).
    pub fn callable_name_counts(&self) -> std::collections::HashMap<&str, usize> {
        let mut count = std::collections::HashMap::new();
        for d in &self.decls {
            let name = match d {
                Decl::Function { name, .. } | Decl::Action(Action { name, .. }) => name,
                Decl::ExternFn(m) => &m.name,
                _ => continue,
            };
            *count.entry(name.as_str()).or_default() += 1;
        }
        count
    }

    /// The names of the actions declared inside any control.
    pub fn control_action_names(&self) -> std::collections::HashSet<&str> {
        self.decls
            .iter()
            .filter_map(|d| match d {
                Decl::Control { locals, .. } => Some(locals),
                _ => None,
            })
            .flatten()
            .filter_map(|l| match l {
                Local::Action(a) => Some(a.name.as_str()),
                _ => None,
            })
            .collect()
    }
}
