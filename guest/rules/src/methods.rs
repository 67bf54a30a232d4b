//! Which MCP methods this server knows, in one table: the revisions that
//! offer each, what each needs, and what its request names. The dispatch
//! (the component's `mcp`) and the header rules ([`crate::headers`]) both
//! read it, so adding a method is one row here and its handler there.

/// A method this server answers (or, for notifications, accepts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    Initialize,
    Ping,
    ServerDiscover,
    ToolsList,
    ToolsCall,
    PromptsList,
    PromptsGet,
    ResourcesList,
    ResourcesTemplatesList,
    ResourcesRead,
    /// 2025-11-25: word when a resource changes, for the session.
    ResourcesSubscribe,
    ResourcesUnsubscribe,
    /// 2026-07-28: a request held open for change notifications.
    SubscriptionsListen,
    LoggingSetLevel,
}

/// The revisions a method belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eras {
    /// 2025-11-25 and 2025-06-18 only.
    Legacy,
    /// 2026-07-28 only.
    Modern,
    Both,
}

/// The params member a request's `Mcp-Name` header repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    /// `params.name`: a tool or a prompt.
    Name,
    /// `params.uri`: a resource.
    Uri,
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub method: Method,
    pub name: &'static str,
    pub eras: Eras,
    /// A 2025-11-25 request needs the session `initialize` opened.
    pub needs_session: bool,
    /// Its reply may open a session (a transport keeping one session per
    /// connection finishes it before it reads the next message).
    pub opens_session: bool,
    /// The params member that names what the request acts on, which the
    /// `Mcp-Name` header repeats (Streamable HTTP's standard headers).
    pub named_by: Option<Named>,
    /// Whether, and how long, a 2026-07-28 result may be cached (`ttlMs`,
    /// `cacheScope`).
    pub cache: Cache,
}

/// How a 2026-07-28 client may cache a result (a `CacheableResult`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cache {
    /// Not a cacheable result.
    Not,
    /// Fixed for the life of the process (the lists, `server/discover`):
    /// shared by every client, for a while.
    Fixed,
    /// A pad's content, which anyone may change at any moment: stale at once,
    /// and for this client only.
    Live,
}

const fn row(method: Method, name: &'static str, eras: Eras) -> Spec {
    Spec {
        method,
        name,
        eras,
        needs_session: false,
        opens_session: false,
        named_by: None,
        cache: Cache::Not,
    }
}

/// Every method, with what it needs.
pub const METHODS: [Spec; 14] = [
    Spec {
        opens_session: true,
        ..row(Method::Initialize, "initialize", Eras::Legacy)
    },
    row(Method::Ping, "ping", Eras::Legacy),
    Spec {
        cache: Cache::Fixed,
        ..row(Method::ServerDiscover, "server/discover", Eras::Modern)
    },
    Spec {
        needs_session: true,
        cache: Cache::Fixed,
        ..row(Method::ToolsList, "tools/list", Eras::Both)
    },
    Spec {
        needs_session: true,
        named_by: Some(Named::Name),
        ..row(Method::ToolsCall, "tools/call", Eras::Both)
    },
    Spec {
        cache: Cache::Fixed,
        ..row(Method::PromptsList, "prompts/list", Eras::Both)
    },
    Spec {
        named_by: Some(Named::Name),
        ..row(Method::PromptsGet, "prompts/get", Eras::Both)
    },
    Spec {
        // What a session used lately: it changes, and is the session's own.
        cache: Cache::Live,
        ..row(Method::ResourcesList, "resources/list", Eras::Both)
    },
    Spec {
        cache: Cache::Fixed,
        ..row(
            Method::ResourcesTemplatesList,
            "resources/templates/list",
            Eras::Both,
        )
    },
    Spec {
        named_by: Some(Named::Uri),
        cache: Cache::Live,
        ..row(Method::ResourcesRead, "resources/read", Eras::Both)
    },
    Spec {
        needs_session: true,
        named_by: Some(Named::Uri),
        ..row(
            Method::ResourcesSubscribe,
            "resources/subscribe",
            Eras::Legacy,
        )
    },
    Spec {
        needs_session: true,
        named_by: Some(Named::Uri),
        ..row(
            Method::ResourcesUnsubscribe,
            "resources/unsubscribe",
            Eras::Legacy,
        )
    },
    row(
        Method::SubscriptionsListen,
        "subscriptions/listen",
        Eras::Modern,
    ),
    row(Method::LoggingSetLevel, "logging/setLevel", Eras::Legacy),
];

impl Method {
    /// The method `name` names, if this server knows it.
    pub fn parse(name: &str) -> Option<Method> {
        METHODS
            .iter()
            .find(|spec| spec.name == name)
            .map(|spec| spec.method)
    }

    pub fn spec(self) -> &'static Spec {
        METHODS
            .iter()
            .find(|spec| spec.method == self)
            .expect("every method has a row")
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Whether a request of this revision (`modern`: 2026-07-28) may call it.
    pub fn offered_in(self, modern: bool) -> bool {
        match self.spec().eras {
            Eras::Both => true,
            Eras::Modern => modern,
            Eras::Legacy => !modern,
        }
    }
}

/// The methods whose reply may open a session.
pub fn session_openers() -> impl Iterator<Item = &'static str> {
    METHODS
        .iter()
        .filter(|spec| spec.opens_session)
        .map(|spec| spec.name)
}

/// The params member the `Mcp-Name` header must repeat for method `name`.
pub fn named_by(name: &str) -> Option<Named> {
    Method::parse(name).and_then(|method| method.spec().named_by)
}

/// Whether method `name` belongs to 2026-07-28 alone, so that calling it
/// says which revision a request is meant for.
pub fn only_modern(name: &str) -> bool {
    Method::parse(name).is_some_and(|method| method.spec().eras == Eras::Modern)
}

/// Whether method `name` may open a session.
pub fn opens_session(name: &str) -> bool {
    Method::parse(name).is_some_and(|method| method.spec().opens_session)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_is_found_by_its_name_once() {
        for spec in METHODS {
            assert_eq!(Method::parse(spec.name), Some(spec.method));
            assert_eq!(
                METHODS.iter().filter(|s| s.method == spec.method).count(),
                1
            );
        }
        assert_eq!(Method::parse("tools/lists"), None);
    }

    #[test]
    fn the_eras_differ_where_the_revisions_do() {
        assert!(Method::Ping.offered_in(false) && !Method::Ping.offered_in(true));
        assert!(
            Method::LoggingSetLevel.offered_in(false) && !Method::LoggingSetLevel.offered_in(true)
        );
        assert!(
            Method::ServerDiscover.offered_in(true) && !Method::ServerDiscover.offered_in(false)
        );
        assert!(Method::ToolsCall.offered_in(true) && Method::ToolsCall.offered_in(false));
        assert_eq!(session_openers().collect::<Vec<_>>(), ["initialize"]);
        assert_eq!(named_by("tools/call"), Some(Named::Name));
        assert_eq!(named_by("resources/read"), Some(Named::Uri));
        assert!(only_modern("server/discover") && !only_modern("tools/list"));
        assert!(opens_session("initialize") && !opens_session("ping"));
        assert_eq!(named_by("tools/list"), None);
    }
}
