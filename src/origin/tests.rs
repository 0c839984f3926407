use super::*;

fn board() -> Board {
    Board::new("Pi\n")
}

fn allowed(hosts: &[&str], origins: &[&str]) -> Allowed {
    let list = |l: &[&str]| l.contains(&"*");
    Allowed {
        hosts: if hosts.is_empty() {
            Hosts::Own
        } else if list(hosts) {
            Hosts::Any
        } else {
            Hosts::Listed(
                hosts
                    .iter()
                    .map(|h| HostPattern::parse(h).unwrap())
                    .collect(),
            )
        },
        origins: if origins.is_empty() {
            Origins::Own
        } else if list(origins) {
            Origins::Any
        } else {
            Origins::Listed(
                origins
                    .iter()
                    .map(|o| SiteOrigin::parse(o).unwrap())
                    .collect(),
            )
        },
    }
}

fn host_only(host: &str) -> Headers<'_> {
    Headers {
        host: Some(host),
        ..Headers::default()
    }
}

#[test]
fn host_check_serves_the_boards_own_names_and_ip_literals() {
    let own = allowed(&[], &[]);
    let served = [
        "127.0.0.1",
        "127.0.0.1:1337",
        "192.168.1.10:1337",
        "[::1]",
        "[::1]:1337",
        "[fe80::1%25eth0]:1337",
        "[2001:DB8::1]:80",
        "localhost",
        "localhost.",
        "LOCALHOST:1337",
        "localhost.:1337",
        "app.localhost:1337",
        "pi",
        "PI:1337",
        "pi.",
        "pi.local",
        "Pi.Local.:1337",
        "pi:",
    ];
    for host in served {
        assert_eq!(
            check(&own, &board(), &host_only(host), Resource::Api),
            Ok(()),
            "{host}"
        );
    }
    let refused = [
        "rebind.attacker.example",
        "rebind.attacker.example:1337",
        "pi.attacker.example",
        "pi.local.attacker.example",
        "localhost.attacker.example",
        "attackerlocalhost",
        "192.168.1.10.nip.io",
        "0x7f000001",
        "2130706433",
        "127.1",
        "::1",
        "[::1",
        "[::1]x",
        "[not-an-ip]:80",
        "pi:http",
        "pi:99999",
        "",
        ":1337",
        "pi.fritz.box",
    ];
    for host in refused {
        assert_eq!(
            check(&own, &board(), &host_only(host), Resource::Api),
            Err(Refusal::Host(host.to_string())),
            "{host}"
        );
        // The page's files too: the refusal names the setting for a person who typed it.
        assert!(check(&own, &board(), &host_only(host), Resource::Page).is_err());
    }
    // No Host at all is no browser.
    assert_eq!(
        check(&own, &board(), &Headers::default(), Resource::Api),
        Ok(())
    );
}

#[test]
fn allowed_hosts_add_names_and_star_turns_the_check_off() {
    let listed = allowed(&["pi.fritz.box", "*.home.arpa", "Panel.LAN."], &[]);
    for host in [
        "pi.fritz.box",
        "PI.FRITZ.BOX:8080",
        "a.home.arpa",
        "b.c.home.arpa.",
        "panel.lan",
        "127.0.0.1",
    ] {
        assert_eq!(
            check(&listed, &board(), &host_only(host), Resource::Api),
            Ok(()),
            "{host}"
        );
    }
    for host in ["home.arpa", "xhome.arpa", "fritz.box", "evil.example"] {
        assert!(
            check(&listed, &board(), &host_only(host), Resource::Api).is_err(),
            "{host}"
        );
    }
    let any = allowed(&["*"], &[]);
    assert_eq!(
        check(
            &any,
            &board(),
            &host_only("rebind.attacker.example"),
            Resource::Api
        ),
        Ok(())
    );
}

#[test]
fn the_boards_names_come_from_its_hostname() {
    assert_eq!(Board::new("pi\n").names(), ["pi", "pi.local"]);
    assert_eq!(
        Board::new("Pi.Example.LAN.").names(),
        ["pi.example.lan", "pi.example.lan.local", "pi", "pi.local"]
    );
    assert!(Board::new("").names().is_empty());
}

#[test]
fn host_patterns_and_origins_are_read_strictly() {
    for good in ["pi.lan", "*.home.arpa", "my_host", "PI.LAN."] {
        assert!(HostPattern::parse(good).is_ok(), "{good}");
    }
    for bad in [
        "http://pi.lan",
        "pi.lan:8080",
        "pi.lan/x",
        "",
        "*",
        "*.",
        "a..b",
        "pi lan",
        "**.x",
    ] {
        let why = HostPattern::parse(bad).unwrap_err().to_string();
        assert!(why.contains("without a scheme or a port"), "{bad}: {why}");
    }
    for (good, same_as) in [
        ("https://home.lan", "https://home.lan:443"),
        ("HTTP://Home.LAN:80/", "http://home.lan"),
        ("http://10.0.0.5:8123", "http://10.0.0.5:8123"),
        ("http://[::1]:3000", "http://[::1]:3000"),
    ] {
        assert_eq!(
            SiteOrigin::parse(good).unwrap(),
            SiteOrigin::parse(same_as).unwrap()
        );
    }
    for bad in [
        "home.lan",
        "https://home.lan/path",
        "https://",
        "ftp://x",
        "chrome-extension://abc",
        "https://user@home.lan",
        "https://home.lan:99999",
    ] {
        assert!(
            SiteOrigin::parse(bad)
                .unwrap_err()
                .to_string()
                .contains("not an origin"),
            "{bad}"
        );
    }
    assert!(
        SiteOrigin::parse("null")
            .unwrap_err()
            .to_string()
            .contains("opaque")
    );
}

/// The refusals word for word, as the log and `--check-config` show them.
#[test]
fn refusals_word_for_word() {
    assert_eq!(
        SiteOrigin::parse(" null ").unwrap_err().to_string(),
        "the opaque origin null (sandboxed frames, local files) cannot be allowed: any page \
         can make one"
    );
    assert_eq!(
        SiteOrigin::parse("home.lan").unwrap_err().to_string(),
        "\"home.lan\" is not an origin: write the scheme, the host and the port if it is not \
         the scheme's default, with no path (https://home.lan, http://10.0.0.5:8123)"
    );
    assert_eq!(
        HostPattern::parse("pi lan").unwrap_err().to_string(),
        "\"pi lan\" is not a host name: write the name alone, without a scheme or a port \
         (pi.fritz.box, or *.home.arpa for every name below home.arpa)"
    );
}

/// A browser's request from a page: Host, Sec-Fetch-Site, Origin, Referer.
fn browser<'a>(
    host: &'a str,
    site: Option<&'a str>,
    origin: Option<&'a str>,
    referer: Option<&'a str>,
) -> Headers<'a> {
    Headers {
        host: Some(host),
        origin,
        referer,
        fetch_site: site,
        fetch_mode: Some("no-cors"),
        fetch_dest: Some("image"),
    }
}

/// A request's headers, whether it is served by default, and whether it is served with
/// dash.lan:3000 allowed.
type CrossSiteCase<'a> = (Headers<'a>, bool, bool);

/// The cases of `cross_site_requests_are_refused_unless_their_origin_is_allowed`, for host `h`.
fn cross_site_cases(h: &str) -> Vec<CrossSiteCase<'_>> {
    vec![
        // The page's own calls and the person's own navigations.
        (
            browser(h, Some("same-origin"), Some("http://pi.local:1337"), None),
            true,
            true,
        ),
        (browser(h, Some("same-origin"), None, None), true, true),
        (browser(h, Some("none"), None, None), true, true),
        (browser(h, Some("NONE"), None, None), true, true),
        // Behind a proxy that rewrites Host, the browser's word still counts.
        (
            browser(
                "127.0.0.1:1337",
                Some("same-origin"),
                Some("https://home.lan"),
                None,
            ),
            true,
            true,
        ),
        // An attacker's <img>, form, no-cors fetch and POST.
        (browser(h, Some("cross-site"), None, None), false, false),
        (
            browser(
                h,
                Some("cross-site"),
                None,
                Some("http://attacker.example/page"),
            ),
            false,
            false,
        ),
        (
            browser(h, Some("cross-site"), Some("http://attacker.example"), None),
            false,
            false,
        ),
        (
            browser(h, Some("cross-site"), Some("null"), None),
            false,
            false,
        ),
        // Another port of the same host is same-site, and refused the same way.
        (
            browser(h, Some("same-site"), Some("http://pi.local:8080"), None),
            false,
            false,
        ),
        (browser(h, Some("something-new"), None, None), false, false),
        // An allowed dashboard: its fetches carry Origin, its links only Referer.
        (
            browser(h, Some("cross-site"), Some("http://dash.lan:3000"), None),
            false,
            true,
        ),
        (
            browser(
                h,
                Some("cross-site"),
                None,
                Some("http://dash.lan:3000/#home"),
            ),
            false,
            true,
        ),
        (
            browser(h, Some("cross-site"), None, Some("http://dash.lan:3001/")),
            false,
            false,
        ),
        (
            browser(h, Some("cross-site"), Some("https://dash.lan:3000"), None),
            false,
            false,
        ),
        // Older browsers without fetch metadata: the Origin must be the one addressed.
        (
            browser(h, None, Some("http://pi.local:1337"), None),
            true,
            true,
        ),
        (
            browser(h, None, Some("http://PI.local.:1337"), None),
            true,
            true,
        ),
        (
            browser("pi.local", None, Some("http://pi.local"), None),
            true,
            true,
        ),
        (browser("pi", None, Some("https://pi"), None), true, true),
        (
            browser(h, None, Some("http://attacker.example"), None),
            false,
            false,
        ),
        (
            browser(h, None, Some("http://pi.local:1338"), None),
            false,
            false,
        ),
        (
            browser(h, None, Some("http://pi.local"), None),
            false,
            false,
        ),
        (browser(h, None, Some("null"), None), false, false),
        (browser(h, None, Some("garbage"), None), false, false),
        (
            browser(h, None, None, Some("http://attacker.example/x")),
            false,
            false,
        ),
        (
            browser(h, None, None, Some("http://pi.local:1337/#/logs")),
            true,
            true,
        ),
        (
            browser(h, None, Some("http://dash.lan:3000"), None),
            false,
            true,
        ),
        // No browser at all: curl, Home Assistant, scripts.
        (browser(h, None, None, None), true, true),
    ]
}

#[test]
fn cross_site_requests_are_refused_unless_their_origin_is_allowed() {
    let own = allowed(&[], &[]);
    let dash = allowed(&[], &["http://dash.lan:3000"]);
    let h = "pi.local:1337";
    let cases = cross_site_cases(h);
    for (headers, by_default, with_dash) in cases {
        assert_eq!(
            check(&own, &board(), &headers, Resource::Api).is_ok(),
            by_default,
            "{headers:?}"
        );
        assert_eq!(
            check(&dash, &board(), &headers, Resource::Api).is_ok(),
            with_dash,
            "{headers:?} with dash.lan allowed"
        );
    }
    let any = allowed(&[], &["*"]);
    assert_eq!(
        check(
            &any,
            &board(),
            &browser(h, Some("cross-site"), Some("null"), None),
            Resource::Api
        ),
        Ok(())
    );
}

#[test]
fn the_page_loads_from_a_link_but_not_inside_another_page() {
    let own = allowed(&[], &[]);
    let nav = |site, mode, dest| Headers {
        host: Some("pi.local:1337"),
        fetch_site: Some(site),
        fetch_mode: Some(mode),
        fetch_dest: Some(dest),
        ..Headers::default()
    };
    let cases = [
        (nav("cross-site", "navigate", "document"), true),
        (nav("same-site", "navigate", "document"), true),
        (nav("none", "navigate", "document"), true),
        (nav("same-origin", "no-cors", "script"), true),
        (nav("cross-site", "navigate", "iframe"), false),
        (nav("cross-site", "no-cors", "script"), false),
        (nav("cross-site", "no-cors", "image"), false),
        (host_only("pi.local:1337"), true),
    ];
    for (headers, served) in cases {
        assert_eq!(
            check(&own, &board(), &headers, Resource::Page).is_ok(),
            served,
            "{headers:?}"
        );
    }
    // The same link to an API address (a GET start) is refused.
    assert!(
        check(
            &own,
            &board(),
            &nav("cross-site", "navigate", "document"),
            Resource::Api
        )
        .is_err()
    );
}

#[test]
fn refusals_name_the_setting_and_bound_what_they_repeat() {
    let m = Refusal::Host("rebind.attacker.example".into()).message();
    assert!(
        m.contains("allowedHosts") && m.contains("rebind.attacker.example"),
        "{m}"
    );
    let m = Refusal::CrossSite {
        site: "cross-site".into(),
        from: Some("http://attacker.example".into()),
    }
    .message();
    assert!(
        m.contains("allowedOrigins") && m.contains("http://attacker.example"),
        "{m}"
    );
    let m = Refusal::CrossSite {
        site: "same-site".into(),
        from: None,
    }
    .message();
    assert!(m.contains("another site"), "{m}");
    assert!(
        Refusal::Foreign("http://x".into())
            .message()
            .contains("allowedOrigins")
    );
    assert!(Refusal::Opaque.message().contains("null"));
    let long = "a".repeat(5000);
    assert!(Refusal::Host(long).message().len() < 400);
}
