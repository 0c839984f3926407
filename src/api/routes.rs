//! The route table: every path actiond answers, in one place. `route` is a pure
//! function from method and path to what should handle it, so the whole table is tested
//! without a socket.

use std::borrow::Cow;

use crate::web;

/// Writes out `Op` and `OPS` from one list, so an operation and its name on the wire are
/// named once: the variant's name is the name.
macro_rules! operations {
    ($($op:ident),+ $(,)?) => {
        /// The 25 operations of the API.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Op {
            $($op),+
        }

        /// Every operation with its name on the wire.
        pub const OPS: [(&str, Op); [$(stringify!($op)),+].len()] = [$((stringify!($op), Op::$op)),+];

        impl Op {
            pub fn name(self) -> &'static str {
                match self {
                    $(Op::$op => stringify!($op)),+
                }
            }
        }
    };
}

operations! {
    StartAction,
    StartActionAndWait,
    StartActionByGet,
    StartActionByGetAndWait,
    RestartAction,
    KillAction,
    ExecutionStatus,
    GetLogs,
    GetActionLogs,
    GetDashboard,
    GetActionBinding,
    GetEntities,
    GetEntity,
    ValidateArgumentType,
    LocalUserLogin,
    Logout,
    WhoAmI,
    PasswordHash,
    Init,
    GetReadyz,
    GetDiagnostics,
    SosReport,
    DumpVars,
    DumpPublicIdActionMap,
    EventStream,
}

impl Op {
    pub fn from_name(name: &str) -> Option<Op> {
        OPS.iter().find(|(n, _)| *n == name).map(|(_, op)| *op)
    }

    /// Whether a guest who must log in is refused (the authentication gate).
    pub fn gated(self) -> bool {
        !matches!(
            self,
            Op::Init | Op::GetReadyz | Op::LocalUserLogin | Op::Logout | Op::ValidateArgumentType
        )
    }

    /// Server-streaming rather than unary.
    pub fn streaming(self) -> bool {
        self == Op::EventStream
    }
}

const SERVICE: &str = "svc.api.v1.ActionApiService/";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route<'a> {
    /// A POST operation.
    Call(Op),
    /// `GET /api/StartActionByGet/<id>` and `…AndWait/<id>`, id percent-decoded.
    GetStart(Op, Cow<'a, str>),
    /// `GET /api/WhoAmI`.
    GetWhoAmI,
    /// `GET /readyz`.
    Readyz,
    /// `GET /metrics`.
    Metrics,
    /// `GET /`: the web page.
    Index,
    /// `GET /<file>`: another file of the web page, by its name in `web::ASSETS` (every
    /// embedded file is routed, and nothing else).
    Static(&'static str),
    /// An API path naming no operation.
    UnknownOp(&'a str),
    /// A known path with the wrong method; the value is the `Allow` header.
    WrongMethod(&'static str),
    NotFound,
}

pub fn route<'a>(method: &str, path: &'a str) -> Route<'a> {
    let is_get = method == "GET" || method == "HEAD";
    let is_post = method == "POST";

    // GET-able start URLs: /api/StartActionByGet/<id>.
    for (prefix, op) in [
        ("/api/StartActionByGetAndWait/", Op::StartActionByGetAndWait),
        ("/api/StartActionByGet/", Op::StartActionByGet),
    ] {
        if let Some(raw) = path.strip_prefix(prefix) {
            // Only GET starts: a HEAD from a link previewer must not run anything.
            if method != "GET" {
                return Route::WrongMethod("GET");
            }
            return match percent_decode(raw) {
                Some(id) if !id.is_empty() && !id.contains('/') => Route::GetStart(op, id),
                _ => Route::NotFound,
            };
        }
    }

    let op_name = path
        .strip_prefix('/')
        .and_then(|p| p.strip_prefix(SERVICE))
        .or_else(|| {
            path.strip_prefix("/api/")
                .and_then(|p| p.strip_prefix(SERVICE))
        })
        .or_else(|| path.strip_prefix("/api/"));
    if let Some(name) = op_name {
        let Some(op) = Op::from_name(name) else {
            return Route::UnknownOp(name);
        };
        if is_post {
            return Route::Call(op);
        }
        if op == Op::WhoAmI && is_get && path == "/api/WhoAmI" {
            return Route::GetWhoAmI;
        }
        return Route::WrongMethod(if op == Op::WhoAmI && path == "/api/WhoAmI" {
            "GET, POST"
        } else {
            "POST"
        });
    }

    let fixed = match path {
        "/readyz" => Route::Readyz,
        "/metrics" => Route::Metrics,
        "/" | "/index.html" => Route::Index,
        // The page's other files, from the one list of embedded files (build.rs `FILES`).
        _ => match path.strip_prefix('/').and_then(web::asset) {
            Some(asset) => Route::Static(asset.name),
            None => return Route::NotFound,
        },
    };
    if is_get {
        fixed
    } else {
        Route::WrongMethod("GET")
    }
}

/// Percent-decodes a path segment; `None` when the escapes are malformed or the result is
/// not UTF-8.
pub fn percent_decode(s: &str) -> Option<Cow<'_, str>> {
    if !s.contains('%') {
        return Some(Cow::Borrowed(s));
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_post_path_styles() {
        for path in [
            "/svc.api.v1.ActionApiService/StartAction",
            "/api/svc.api.v1.ActionApiService/StartAction",
            "/api/StartAction",
        ] {
            assert_eq!(route("POST", path), Route::Call(Op::StartAction), "{path}");
        }
    }

    #[test]
    fn every_operation_is_routed_by_name() {
        for (name, op) in OPS {
            assert_eq!(route("POST", &format!("/api/{name}")), Route::Call(op));
            assert_eq!(Op::from_name(name), Some(op));
            assert_eq!(op.name(), name);
        }
    }

    #[test]
    fn table() {
        let cases: &[(&str, &str, Route)] = &[
            (
                "GET",
                "/api/StartActionByGet/date",
                Route::GetStart(Op::StartActionByGet, "date".into()),
            ),
            (
                "GET",
                "/api/StartActionByGetAndWait/ping_host",
                Route::GetStart(Op::StartActionByGetAndWait, "ping_host".into()),
            ),
            (
                "GET",
                "/api/StartActionByGet/a%2Db%20c",
                Route::GetStart(Op::StartActionByGet, "a-b c".into()),
            ),
            ("GET", "/api/StartActionByGet/", Route::NotFound),
            ("GET", "/api/StartActionByGet/%zz", Route::NotFound),
            (
                "POST",
                "/api/StartActionByGet/date",
                Route::WrongMethod("GET"),
            ),
            (
                "HEAD",
                "/api/StartActionByGet/date",
                Route::WrongMethod("GET"),
            ),
            ("HEAD", "/readyz", Route::Readyz),
            (
                "POST",
                "/api/StartActionByGet",
                Route::Call(Op::StartActionByGet),
            ),
            ("GET", "/api/WhoAmI", Route::GetWhoAmI),
            ("DELETE", "/api/WhoAmI", Route::WrongMethod("GET, POST")),
            ("GET", "/api/StartAction", Route::WrongMethod("POST")),
            (
                "PUT",
                "/svc.api.v1.ActionApiService/GetLogs",
                Route::WrongMethod("POST"),
            ),
            ("POST", "/api/NoSuchThing", Route::UnknownOp("NoSuchThing")),
            (
                "POST",
                "/svc.api.v1.ActionApiService/Nope",
                Route::UnknownOp("Nope"),
            ),
            ("GET", "/readyz", Route::Readyz),
            ("POST", "/readyz", Route::WrongMethod("GET")),
            ("GET", "/metrics", Route::Metrics),
            ("GET", "/", Route::Index),
            ("GET", "/index.html", Route::Index),
            ("HEAD", "/", Route::Index),
            ("GET", "/app.js", Route::Static("app.js")),
            ("GET", "/app.css", Route::Static("app.css")),
            ("GET", "/icon.svg", Route::Static("icon.svg")),
            ("POST", "/app.js", Route::WrongMethod("GET")),
            ("GET", "/app.js/", Route::NotFound),
            ("GET", "/assets/app.js", Route::NotFound),
            ("GET", "/favicon.ico", Route::NotFound),
            ("GET", "/nothing/here", Route::NotFound),
            ("POST", "/svc.api.v1.Other/StartAction", Route::NotFound),
        ];
        for (method, path, want) in cases {
            assert_eq!(&route(method, path), want, "{method} {path}");
        }
    }

    #[test]
    fn the_gate_spares_only_the_five_open_operations() {
        let open: Vec<&str> = OPS
            .iter()
            .filter(|(_, op)| !op.gated())
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(
            open,
            [
                "ValidateArgumentType",
                "LocalUserLogin",
                "Logout",
                "Init",
                "GetReadyz"
            ]
        );
    }
}
