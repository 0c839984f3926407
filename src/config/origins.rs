//! `allowedHosts` and `allowedOrigins`: the names and the web origins a request may come
//! through beyond the board's own (what they mean is `origin`'s to decide). Each entry is
//! read once, at load; an entry that is not a host name or an origin is an error at its
//! path, because a guess here could open the API to every web page.

use super::checker::{Checker, Field};
use crate::origin::{Allowed, BadEntry, HostPattern, Hosts, Origins, SiteOrigin};

pub(super) fn allowed(
    c: &mut Checker<'_>,
    hosts: Field<'_, '_>,
    origins: Field<'_, '_>,
) -> Allowed {
    Allowed {
        hosts: list(
            c,
            hosts,
            HostPattern::parse,
            Hosts::Own,
            Hosts::Listed,
            Hosts::Any,
        ),
        origins: list(
            c,
            origins,
            SiteOrigin::parse,
            Origins::Own,
            Origins::Listed,
            Origins::Any,
        ),
    }
}

/// A list of entries read by `parse`; absent or empty is `own`, a `*` entry is `any`.
fn list<E, L>(
    c: &mut Checker<'_>,
    field: Field<'_, '_>,
    parse: fn(&str) -> Result<E, BadEntry>,
    own: L,
    listed: fn(Vec<E>) -> L,
    any: L,
) -> L {
    let texts = c.text_list(field);
    if texts.iter().any(|t| t.trim() == "*") {
        return any;
    }
    let mut entries = Vec::with_capacity(texts.len());
    c.each_entry(field, &texts, |_, text| match parse(text) {
        Ok(entry) => {
            entries.push(entry);
            None
        }
        Err(why) => Some(why.to_string()),
    });
    if entries.is_empty() {
        own
    } else {
        listed(entries)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::fixtures::*;
    use crate::origin::{HostPattern, Hosts, Origins, SiteOrigin};

    #[test]
    fn lists_are_read_with_their_paths() {
        let (c, _) = ok("allowedHosts: [pi.fritz.box, '*.home.arpa']\n\
                         allowedOrigins: 'https://home.lan'\n");
        assert_eq!(
            c.allowed.hosts,
            Hosts::Listed(vec![
                HostPattern::parse("pi.fritz.box").unwrap(),
                HostPattern::parse("*.home.arpa").unwrap()
            ])
        );
        assert_eq!(
            c.allowed.origins,
            Origins::Listed(vec![SiteOrigin::parse("https://home.lan").unwrap()])
        );
        let (c, _) = ok("allowedHosts: ['*']\nallowedOrigins: ['*', 'https://x.lan']\n");
        assert_eq!(
            (c.allowed.hosts, c.allowed.origins),
            (Hosts::Any, Origins::Any)
        );
        let (c, _) = ok("allowedHosts: []\n");
        assert_eq!(
            (c.allowed.hosts, c.allowed.origins),
            (Hosts::Own, Origins::Own)
        );
        assert_error(
            "allowedHosts: [pi.lan, 'http://pi.lan:8080']\n",
            "allowedHosts[1]",
            "without a scheme or a port",
        );
        assert_error(
            "allowedOrigins: [home.lan]\n",
            "allowedOrigins[0]",
            "not an origin",
        );
        assert_error("allowedOrigins: 'null'\n", "allowedOrigins", "opaque");
    }
}
