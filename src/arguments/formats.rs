//! The argument types with a syntax of their own: `email`, `url` and `datetime`. Each check
//! is ASCII-exact and names the rule a value broke without repeating the value. The values
//! reaching them are not empty: `ArgType::check` refuses an empty one first.

/// The part of the email syntax a value broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Email {
    NoAt,
    TwoAts,
    NoName,
    NoDomain,
    Name,
    Domain,
}

/// The part of the URL syntax a value broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Url {
    /// Spaces, control characters or non-ASCII characters.
    Unencoded,
    /// Not `http://` or `https://`.
    Scheme,
    UserPart,
    Ipv6Unclosed,
    Ipv6,
    Host,
    NoHost,
    HostChars,
    Port,
    Chars,
}

/// The part of the datetime syntax a value broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datetime {
    Layout,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

impl std::fmt::Display for Email {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Email::NoAt => "must be an email address like name@example.com (one @)",
            Email::TwoAts => "must contain exactly one @",
            Email::NoName => "must have a name before the @",
            Email::NoDomain => "must have a domain after the @",
            Email::Name => {
                "the part before the @ may only be letters, digits and \
                 !#%&'*+-/=?^_{|}~, with dots only between them (not `$` or a backtick, \
                 which RFC 5322 allows but no mail provider hands out: a shell expands them \
                 even inside double quotes)"
            }
            Email::Domain => {
                "the domain after the @ must be dot-separated names of letters, digits and \
                 hyphens"
            }
        })
    }
}

impl std::fmt::Display for Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const RULE: &str = "must be an absolute http:// or https:// URL";
        match self {
            Url::Unencoded => f.write_str(
                "must not contain spaces, control characters or non-ASCII characters \
                 (percent-encode them)",
            ),
            Url::Scheme => f.write_str(RULE),
            Url::UserPart => write!(f, "{RULE}; the user part before the host is malformed"),
            Url::Ipv6Unclosed => write!(f, "{RULE}; the IPv6 host is missing its ']'"),
            Url::Ipv6 => write!(f, "{RULE}; the IPv6 host is malformed"),
            Url::Host => write!(f, "{RULE}; the host is malformed"),
            Url::NoHost => write!(f, "{RULE} with a host"),
            Url::HostChars => write!(
                f,
                "{RULE}; the host may only be letters, digits, '.', '_', '~' and '-'"
            ),
            Url::Port => write!(f, "{RULE}; the port must be a number up to 65535"),
            Url::Chars => write!(
                f,
                "{RULE} made of URL characters only (letters, digits, -._~:/?#@!$&'()*+,;= and \
                 %XX escapes; [ and ] only around an IPv6 host)"
            ),
        }
    }
}

impl std::fmt::Display for Datetime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Datetime::Layout => {
                "must be a date and time written YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS"
            }
            Datetime::Month => "the month must be 01 to 12",
            Datetime::Day => "the day must exist in that month",
            Datetime::Hour => "the hour must be 00 to 23",
            Datetime::Minute => "the minute must be 00 to 59",
            Datetime::Second => "the second must be 00 to 59",
        })
    }
}

/// One plain `local@domain` address (RFC 5322 dot-atom on both sides, ASCII only).
///
/// Decisions: the local part takes every RFC 5322 atom character, so real addresses such as
/// `o'brien@example.com` or `me+tag@example.com` pass (the shell quoting of the substitution
/// makes `'`, `$` and the like harmless); quoted local parts, display names (`Name <a@b.c>`),
/// comments and domain literals (`[192.0.2.1]`) are refused. The domain needs no dot, because
/// `root@localhost` is a normal address on a board, as it is for OliveTin's Go parser. It must
/// be dot-separated labels of letters, digits and hyphens (1-63 each, no hyphen at either end).
pub(super) fn check_email(value: &str) -> Result<String, Email> {
    let Some((local, domain)) = value.split_once('@') else {
        return Err(Email::NoAt);
    };
    if domain.contains('@') {
        return Err(Email::TwoAts);
    }
    if local.is_empty() {
        return Err(Email::NoName);
    }
    if domain.is_empty() {
        return Err(Email::NoDomain);
    }
    let atom_ok = |atom: &str| {
        !atom.is_empty()
            && atom
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#%&'*+-/=?^_{|}~".contains(c))
    };
    if !local.split('.').all(atom_ok) {
        return Err(Email::Name);
    }
    if !is_dns_name(domain) {
        return Err(Email::Domain);
    }
    Ok(value.to_owned())
}

/// Dot-separated labels of ASCII letters, digits and hyphens, 1-63 bytes each, no hyphen first
/// or last, 253 bytes in all, no trailing dot.
fn is_dns_name(name: &str) -> bool {
    name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// An absolute `http://` or `https://` URL in RFC 3986 form.
///
/// Decisions: the scheme is case-insensitive (`HTTPS://` is the same URL). Only URL characters
/// are allowed (RFC 3986 unreserved, reserved and `%` followed by two hex digits), so spaces,
/// control characters, non-ASCII text (percent-encode it, or punycode for host names) and
/// ``"<>\^`{|}`` are refused. The backslash matters most: browsers read it as `/` in http URLs,
/// so `http://a\@b` would name a different host for them than for RFC parsers. The host is a
/// name of letters, digits, `.`, `_`, `~` and `-`, or an IPv6 literal in brackets; no
/// percent-escapes there (WHATWG decodes them, another place parsers disagree). A port, when
/// present, is 1-5 digits up to 65535. User information before the host is allowed.
pub(super) fn check_url(value: &str) -> Result<String, Url> {
    if !value.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Url::Unencoded);
    }
    let rest = strip_prefix_ignore_case(value, "http://")
        .or_else(|| strip_prefix_ignore_case(value, "https://"))
        .ok_or(Url::Scheme)?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host_port = match authority.rsplit_once('@') {
        Some((userinfo, host_port)) => {
            if !percent_escapes_ok(userinfo)
                || !userinfo
                    .chars()
                    .all(|c| is_unreserved(c) || is_sub_delim(c) || matches!(c, ':' | '%'))
            {
                return Err(Url::UserPart);
            }
            host_port
        }
        None => authority,
    };
    let (host, port) = if let Some(literal) = host_port.strip_prefix('[') {
        let Some((address, after)) = literal.split_once(']') else {
            return Err(Url::Ipv6Unclosed);
        };
        let address_ok = address.contains(':')
            && address
                .chars()
                .all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '.'));
        if !address_ok {
            return Err(Url::Ipv6);
        }
        match after {
            "" => (address, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (address, Some(port)),
                None => return Err(Url::Host),
            },
        }
    } else {
        match host_port.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    if host.is_empty() {
        return Err(Url::NoHost);
    }
    if !host_port.starts_with('[')
        && !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '-'))
    {
        return Err(Url::HostChars);
    }
    if let Some(port) = port {
        let port_ok = (1..=5).contains(&port.len())
            && port.bytes().all(|b| b.is_ascii_digit())
            && port.parse::<u32>().is_ok_and(|p| p <= 65535);
        if !port_ok {
            return Err(Url::Port);
        }
    }
    // path-abempty ["?" query] ["#" fragment]: pchar and '/' in the path, '?' too after it.
    let (before_fragment, fragment) = match tail.split_once('#') {
        Some((before, fragment)) => (before, Some(fragment)),
        None => (tail, None),
    };
    let (path, query) = match before_fragment.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (before_fragment, None),
    };
    let path_ok = path.chars().all(|c| is_pchar(c) || c == '/');
    let rest_ok = query
        .into_iter()
        .chain(fragment)
        .all(|part| part.chars().all(|c| is_pchar(c) || matches!(c, '/' | '?')));
    if !path_ok || !rest_ok || !percent_escapes_ok(tail) {
        return Err(Url::Chars);
    }
    Ok(value.to_owned())
}

fn strip_prefix_ignore_case<'a>(value: &'a str, prefix: &str) -> Option<&'a str> {
    let head = value.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &value[prefix.len()..])
}

fn is_unreserved(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

fn is_sub_delim(c: char) -> bool {
    matches!(
        c,
        '!' | '$' | '&' | '\'' | '(' | ')' | '*' | '+' | ',' | ';' | '='
    )
}

fn is_pchar(c: char) -> bool {
    is_unreserved(c) || is_sub_delim(c) || matches!(c, ':' | '@' | '%')
}

/// Every `%` is followed by two hex digits.
fn percent_escapes_ok(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().all(|(i, &b)| {
        b != b'%'
            || (bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
    })
}

/// `YYYY-MM-DDTHH:MM[:SS]` with valid ranges; the normalized value always has seconds, because
/// browsers on Android send datetime-local values without them.
///
/// Decisions: any four-digit year (0000-9999) is accepted, with Gregorian leap years; the `T`
/// must be upper case; no fractional seconds, no time zone, no leap second (`:60`).
pub(super) fn check_datetime(value: &str) -> Result<String, Datetime> {
    let b = value.as_bytes();
    let layout_ok = (b.len() == 16 || (b.len() == 19 && b[16] == b':'))
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15]
            .iter()
            .chain(if b.len() == 19 { &[17, 18][..] } else { &[] })
            .all(|&i| b[i].is_ascii_digit());
    if !layout_ok {
        return Err(Datetime::Layout);
    }
    // The layout check proved these bytes are ASCII digits.
    let number = |from: usize, to: usize| {
        b[from..to]
            .iter()
            .fold(0u32, |n, d| n * 10 + u32::from(d - b'0'))
    };
    let (year, month, day) = (number(0, 4), number(5, 7), number(8, 10));
    let (hour, minute) = (number(11, 13), number(14, 16));
    let second = if b.len() == 19 { number(17, 19) } else { 0 };
    if !(1..=12).contains(&month) {
        return Err(Datetime::Month);
    }
    if !(1..=days_in_month(year, month)).contains(&day) {
        return Err(Datetime::Day);
    }
    if hour > 23 {
        return Err(Datetime::Hour);
    }
    if minute > 59 {
        return Err(Datetime::Minute);
    }
    if second > 59 {
        return Err(Datetime::Second);
    }
    Ok(if b.len() == 16 {
        format!("{value}:00")
    } else {
        value.to_owned()
    })
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use crate::arguments::ArgType;
    use crate::arguments::fixtures::*;

    #[test]
    fn email() {
        table(
            "email",
            &[
                ("a@b.c", true),
                ("first.last@example.com", true),
                ("me+tag@example.com", true),
                ("o'brien@example.com", true),
                ("root@localhost", true),
                ("x@sub-domain.example.co.uk", true),
                ("!#%&'*+-/=?^_{|}~@example.com", true),
                ("a$b@example.com", false),
                ("`id`@example.com", false),
                ("", false),
                ("plain", false),
                ("a b@c.d", false),
                ("a@b .c", false),
                (" a@b.c", false),
                ("a@b.c ", false),
                ("a@b.c\n", false),
                ("a\t@b.c", false),
                ("@x.y", false),
                ("x@", false),
                ("@", false),
                ("x@@y", false),
                ("x@y@z", false),
                ("Name <a@b.c>", false),
                ("<a@b.c>", false),
                ("\"a b\"@c.d", false),
                ("a(comment)@b.c", false),
                (".a@b.c", false),
                ("a.@b.c", false),
                ("a..b@c.d", false),
                ("a@.b.c", false),
                ("a@b.c.", false),
                ("a@b..c", false),
                ("a@-b.c", false),
                ("a@b-.c", false),
                ("a@b_c.d", false),
                ("a@[192.0.2.1]", false),
                ("a@b.c;rm", false),
                ("é@b.c", false),
                ("a@bé.c", false),
                ("a@xn--bcher-kva.example", true),
                ("ａ@b.c", false),
                ("a,b@c.d", false),
            ],
        );
        let long_label = format!("a@{}.com", "x".repeat(63));
        ok(&ArgType::Email, &long_label);
        refused(&ArgType::Email, &format!("a@{}.com", "x".repeat(64)));
        let long_domain = format!("a@{}", vec!["x".repeat(60); 5].join("."));
        refused(&ArgType::Email, &long_domain);
    }

    #[test]
    fn url() {
        table(
            "url",
            &[
                ("http://example.com", true),
                ("https://example.com/", true),
                ("HTTPS://Example.COM/Path", true),
                ("HtTp://x", true),
                ("http://localhost:8080/a/b?c=d&e=f#frag", true),
                ("http://user:pa$$@host/", true),
                ("http://192.168.1.10/", true),
                ("http://[::1]:8080/", true),
                ("http://[2001:db8::1]/", true),
                ("http://[::ffff:192.0.2.1]/", true),
                ("http://host/a%20b", true),
                ("http://host/?q=a+b;c=(d)*!~'", true),
                ("http://host?x", true),
                ("http://host#x", true),
                ("http://my_host.lan/", true),
                ("http://host:65535/", true),
                ("", false),
                ("example.com", false),
                ("/absolute/path", false),
                ("12345", false),
                ("_!23;", false),
                ("ftp://example.com/", false),
                ("file:///etc/passwd", false),
                ("javascript:alert(1)", false),
                ("http:/x", false),
                ("http:x", false),
                ("http://", false),
                ("http:///path", false),
                ("http://:80/", false),
                ("http://user@/", false),
                ("http://exa mple.com/", false),
                ("http://example.com/a b", false),
                (" http://example.com", false),
                ("http://example.com/\n", false),
                ("http://example.com/\t", false),
                ("http://example.com/\r", false),
                ("http://example.com/\u{7f}", false),
                ("http://exämple.com/", false),
                ("http://example.com/ä", false),
                ("http://a\\@b/", false),
                ("http://host/a\\b", false),
                ("http://host/\"", false),
                ("http://host/<x>", false),
                ("http://host/`id`", false),
                ("http://host/{x}", false),
                ("http://host/a|b", false),
                ("http://host/a^b", false),
                ("http://host/[x]", false),
                ("http://host/#a#b", false),
                ("http://host/%", false),
                ("http://host/%2", false),
                ("http://host/%zz", false),
                ("http://%65vil.com/", false),
                ("http://ho$t/", false),
                ("http://host:/", false),
                ("http://host:65536/", false),
                ("http://host:123456/", false),
                ("http://host:8a/", false),
                ("http://host:-1/", false),
                ("http://[::1/", false),
                ("http://[zz::1]/", false),
                ("http://[127.0.0.1]/", false),
                ("http://[::1]x/", false),
                ("http://us er@host/", false),
                ("http://u[s]er@host/", false),
            ],
        );
    }

    #[test]
    fn datetime() {
        table(
            "datetime",
            &[
                ("2024-01-01T00:00", true),
                ("2024-01-01T00:00:00", true),
                ("2024-12-31T23:59:59", true),
                ("2024-02-29T12:00", true),
                ("2000-02-29T12:00", true),
                ("1600-02-29T00:00", true),
                ("0000-01-01T00:00", true),
                ("9999-12-31T23:59:59", true),
                ("2024-04-30T00:00", true),
                ("2023-02-28T00:00", true),
                ("2023-02-29T12:00", false),
                ("1900-02-29T12:00", false),
                ("2100-02-29T12:00", false),
                ("2024-02-30T12:00", false),
                ("2024-04-31T00:00", false),
                ("2024-06-31T00:00", false),
                ("2024-09-31T00:00", false),
                ("2024-11-31T00:00", false),
                ("2024-01-32T00:00", false),
                ("2024-01-00T00:00", false),
                ("2024-00-01T00:00", false),
                ("2024-13-01T00:00", false),
                ("2024-01-01T24:00", false),
                ("2024-01-01T23:60", false),
                ("2024-01-01T23:59:60", false),
                ("2024-01-01T99:99:99", false),
                ("", false),
                ("2024-01-01", false),
                ("12:00", false),
                ("2024-01-01t00:00", false),
                ("2024-01-01 00:00", false),
                ("2024-1-01T00:00", false),
                ("2024-01-1T00:00", false),
                ("24-01-01T00:00", false),
                ("+2024-01-01T00:00", false),
                ("2024-01-01T0:00", false),
                ("2024-01-01T00:0", false),
                ("2024-01-01T00:00:0", false),
                ("2024-01-01T00:00:00.5", false),
                ("2024-01-01T00:00:00Z", false),
                ("2024-01-01T00:00Z", false),
                ("2024-01-01T00:00+01:00", false),
                ("2024-01-01T00:00:00\n", false),
                (" 2024-01-01T00:00", false),
                ("2024/01/01T00:00", false),
                ("٢٠٢٤-01-01T00:00", false),
                ("２０２４-01-01T00:00", false),
                ("2024-01-01T00:00-00", false),
                ("2024-01-01T00:00:-1", false),
            ],
        );
        assert_eq!(
            ok(&ArgType::Datetime, "2024-02-29T12:00"),
            "2024-02-29T12:00:00"
        );
        assert_eq!(
            ok(&ArgType::Datetime, "2024-02-29T12:00:07"),
            "2024-02-29T12:00:07"
        );
        assert_eq!(
            refused(&ArgType::Datetime, "2024-13-01T00:00"),
            "the month must be 01 to 12"
        );
        assert_eq!(
            refused(&ArgType::Datetime, "2023-02-29T00:00"),
            "the day must exist in that month"
        );
    }

    #[test]
    fn email_and_url_metacharacters() {
        // RFC 5322 allows some of these in the local part; the rest are refused anywhere,
        // and so are `$` and the backtick, which a shell expands inside double quotes too.
        let local_ok = "'{}|&*?!~#";
        for m in SHELL_META {
            let local = format!("a{m}b@example.com");
            let domain = format!("ab@exa{m}mple.com");
            assert_eq!(
                ArgType::Email.check(&local, &[]).is_ok(),
                local_ok.contains(*m),
                "{local:?}"
            );
            refused(&ArgType::Email, &domain);
        }
        // In a URL path, sub-delimiters and '~' are URL characters; '?' starts the query and
        // '#' the fragment. Everything else here is refused.
        let path_ok = "'$()*;&!~?#";
        for m in SHELL_META {
            let path = format!("http://host/a{m}b");
            let host = format!("http://ho{m}st/");
            assert_eq!(
                ArgType::Url.check(&path, &[]).is_ok(),
                path_ok.contains(*m),
                "{path:?}"
            );
            // '~' is a host character, and '?' and '#' end the host (the rest is a query or
            // fragment); the others are refused.
            assert_eq!(
                ArgType::Url.check(&host, &[]).is_ok(),
                "~?#".contains(*m),
                "{host:?}"
            );
        }
    }
}
