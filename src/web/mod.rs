//! The embedded web page: its files (src/web/assets, gzipped at build time by build.rs) and
//! how each request for one is answered: gzip when the client accepts it, else the bytes
//! inflated on the spot; a strong ETag per representation with `If-None-Match` → 304; and
//! the cache rule. It decides headers and bodies as a pure function ([`respond`]) and must
//! not touch sockets or the file system: the server turns a [`Reply`] into a response.
//!
//! Cache rule: `index.html` is `no-cache` (always revalidated, so a new build shows at the
//! next load; a 304 costs one small round trip on the LAN). The other files are named in
//! index.html with their content hash (`app.js?v=HASH`): asked for with the current hash
//! they are immutable for a year, since a new build changes the URL; asked for without it
//! (or with an old one) they are `no-cache` too. The manifest and the PNG icons are asked
//! for by fixed names (home screens keep the addresses they were given), so they are always
//! revalidated.
//!
//! The manifest is the one file answered with something of the config in it: its `name` and
//! `short_name` are the board's `pageTitle` ([`manifest`]), so two boards on one home screen
//! are told apart. It has no `id`: a manifest's `id` is resolved against the site's root, not
//! against the manifest, so under a sub-path (`https://home.lan/actiond/`) `"./"` named the
//! whole site; without one, the app's id is its `start_url`, the page's own address.
//!
//! Only the gzipped bytes are embedded. Every browser accepts gzip, so inflating for the
//! rare client that does not (curl without `--compressed`) is cheaper than carrying both
//! forms in the binary of a small board.

use std::borrow::Cow;
use std::io::Read;

/// One embedded file.
#[derive(Debug)]
pub struct Asset {
    /// The file name under src/web/assets, which is its path without the leading `/`.
    pub name: &'static str,
    /// FNV-1a 64 of the file's bytes (as served), 16 hex digits.
    pub hash: &'static str,
    /// The uncompressed length.
    pub len: usize,
    pub gzip: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/web_assets.rs"));

/// The manifest's file name; its text is a template (see [`manifest`]).
pub const MANIFEST: &str = "manifest.webmanifest";

/// The page's budget: every file together, gzipped (a unit test holds the page to it).
#[cfg(test)]
pub const BUDGET_GZIP_BYTES: usize = 60 * 1024;

/// The headers every asset answer carries, whatever its type.
const NOSNIFF: (&str, &str) = ("x-content-type-options", "nosniff");

/// What the page may load and where from. Nothing leaves the board: scripts, styles, images
/// and connections come from this origin only. Inline styles are allowed because the banner's
/// `bannerCss` and the output of `execution-dialog-output-html` actions may carry them; the
/// output frame itself is sandboxed without scripts.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
img-src 'self' data:; connect-src 'self'; frame-src 'self'; frame-ancestors 'self'; \
base-uri 'none'; form-action 'self'; object-src 'none'";

pub fn asset(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

/// The media type of a page file, by its extension. It covers the kinds of file a web page
/// installs with (a manifest, PNG and ICO icons) as well as the ones it has, so adding such
/// a file is one line in build.rs `FILES` and nothing here.
pub fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("webmanifest") => "application/manifest+json",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

/// An answer for one asset request.
#[derive(Debug, PartialEq, Eq)]
pub struct Reply {
    /// 200 or 304.
    pub status: u16,
    pub headers: Vec<(&'static str, Cow<'static, str>)>,
    /// Empty for a 304.
    pub body: Cow<'static, [u8]>,
}

/// The request headers that matter here, as received (None when absent).
#[derive(Debug, Default, Clone, Copy)]
pub struct Conditions<'a> {
    pub accept_encoding: Option<&'a str>,
    pub if_none_match: Option<&'a str>,
    /// The URL's query, without `?`.
    pub query: Option<&'a str>,
}

pub fn respond(asset: &'static Asset, when: Conditions<'_>) -> Reply {
    let gzip = accepts_gzip(when.accept_encoding.unwrap_or(""));
    // Two representations, two strong validators: a cache must not hand gzip bytes to a
    // client that asked for identity under the same tag.
    let etag = if gzip {
        format!("\"{}-gz\"", asset.hash)
    } else {
        format!("\"{}\"", asset.hash)
    };
    let immutable = asset.name != "index.html"
        && when.query.is_some_and(|q| {
            q.split('&')
                .any(|p| p.strip_prefix("v=") == Some(asset.hash))
        });
    let cache = if immutable {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let mut headers: Vec<(&'static str, Cow<'static, str>)> = vec![
        ("etag", Cow::Owned(etag.clone())),
        ("cache-control", Cow::Borrowed(cache)),
        ("vary", Cow::Borrowed("Accept-Encoding")),
    ];
    if when.if_none_match.is_some_and(|v| matches_etag(v, &etag)) {
        return Reply {
            status: 304,
            headers,
            body: Cow::Borrowed(&[]),
        };
    }
    headers.push(("content-type", Cow::Borrowed(content_type(asset.name))));
    headers.push((NOSNIFF.0, Cow::Borrowed(NOSNIFF.1)));
    if asset.name.ends_with(".html") {
        headers.push(("content-security-policy", Cow::Borrowed(CSP)));
        headers.push(("referrer-policy", Cow::Borrowed("no-referrer")));
        // A page of another site that opened this one keeps no handle on it: it cannot steer
        // the logged-in page to the view it wants under the user's next click. Browsers honour
        // it on HTTPS and loopback only; over plain HTTP to a LAN name it is not enforced.
        headers.push(("cross-origin-opener-policy", Cow::Borrowed("same-origin")));
    }
    let body = if gzip {
        headers.push(("content-encoding", Cow::Borrowed("gzip")));
        Cow::Borrowed(asset.gzip)
    } else {
        Cow::Owned(inflate(asset))
    };
    Reply {
        status: 200,
        headers,
        body,
    }
}

/// The web manifest of a board whose page is titled `page_title`: the template's `"@name@"`
/// becomes the title and `"@short_name@"` its [`short_name`], each as a JSON string. It is
/// made per request (about 600 bytes, gzipped on the spot for a browser), with a strong ETag
/// of its own bytes, and revalidated (`no-cache`): a new title shows at the next look.
pub fn manifest(page_title: &str, when: Conditions<'_>) -> Reply {
    let template = asset(MANIFEST).map(inflate).unwrap_or_default();
    let json = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"actiond\"".into());
    let body = String::from_utf8_lossy(&template)
        .replace("\"@name@\"", &json(page_title))
        .replace("\"@short_name@\"", &json(&short_name(page_title)))
        .into_bytes();
    let gzip = accepts_gzip(when.accept_encoding.unwrap_or(""));
    let etag = if gzip {
        format!("\"m{}-gz\"", fnv(&body))
    } else {
        format!("\"m{}\"", fnv(&body))
    };
    let mut headers: Vec<(&'static str, Cow<'static, str>)> = vec![
        ("etag", Cow::Owned(etag.clone())),
        ("cache-control", Cow::Borrowed("no-cache")),
        ("vary", Cow::Borrowed("Accept-Encoding")),
    ];
    if when.if_none_match.is_some_and(|v| matches_etag(v, &etag)) {
        return Reply {
            status: 304,
            headers,
            body: Cow::Borrowed(&[]),
        };
    }
    headers.push(("content-type", Cow::Borrowed(content_type(MANIFEST))));
    headers.push((NOSNIFF.0, Cow::Borrowed(NOSNIFF.1)));
    let body = if gzip {
        headers.push(("content-encoding", Cow::Borrowed("gzip")));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        // Writing into memory cannot fail.
        let _ = std::io::Write::write_all(&mut gz, &body);
        gz.finish().unwrap_or_default()
    } else {
        body
    };
    Reply {
        status: 200,
        headers,
        body: Cow::Owned(body),
    }
}

/// The name under a home-screen icon, where about 12 characters fit: the title when it fits,
/// else its first words that do, else its first 12 characters.
pub fn short_name(title: &str) -> String {
    const FITS: usize = 12;
    let title = title.trim();
    if title.chars().count() <= FITS {
        return title.to_string();
    }
    let mut out = String::new();
    for word in title.split_whitespace() {
        let more = if out.is_empty() { 0 } else { 1 } + word.chars().count();
        if out.chars().count() + more > FITS {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.is_empty() {
        out = title.chars().take(FITS).collect();
    }
    out
}

/// FNV-1a 64 as 16 hex digits, as build.rs hashes the files: a validator, not a secret.
fn fnv(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The asset's own bytes. The input was made by build.rs from our files, so it cannot fail;
/// if it ever did, the answer would be visibly empty rather than a crash.
pub fn inflate(asset: &Asset) -> Vec<u8> {
    let mut out = Vec::with_capacity(asset.len);
    let _ = flate2::read::GzDecoder::new(asset.gzip).read_to_end(&mut out);
    out
}

/// Whether an `Accept-Encoding` value allows gzip: `gzip` (or `x-gzip`, or `*`) with a
/// non-zero q. An explicit `gzip;q=0` wins over `*`.
pub fn accepts_gzip(accept_encoding: &str) -> bool {
    let mut star = false;
    for item in accept_encoding.split(',') {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q_zero = parts.any(|p| {
            let p = p.trim();
            p.strip_prefix("q=")
                .or_else(|| p.strip_prefix("Q="))
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        match coding.as_str() {
            "gzip" | "x-gzip" => return !q_zero,
            "*" => star = !q_zero,
            _ => {}
        }
    }
    star
}

/// `If-None-Match` uses the weak comparison (RFC 9110 §13.1.2): `W/` is ignored, `*` matches.
fn matches_etag(if_none_match: &str, etag: &str) -> bool {
    if_none_match.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == etag
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Route, route};

    #[test]
    fn the_page_fits_its_gzip_budget() {
        let total: usize = ASSETS.iter().map(|a| a.gzip.len()).sum();
        let sizes: Vec<String> = ASSETS
            .iter()
            .map(|a| format!("{} {} B ({} B gzipped)", a.name, a.len, a.gzip.len()))
            .collect();
        assert!(
            total < BUDGET_GZIP_BYTES,
            "the web page is {total} B gzipped, over its budget of {BUDGET_GZIP_BYTES} B: {sizes:?}"
        );
        // A page this small means something went missing.
        assert!(total > 4 * 1024, "{sizes:?}");
    }

    #[test]
    fn every_asset_inflates_to_itself_and_index_names_the_others_by_hash() {
        for a in ASSETS {
            assert_eq!(inflate(a).len(), a.len, "{}", a.name);
        }
        let index = String::from_utf8(inflate(asset("index.html").unwrap())).unwrap();
        // Relative addresses (no leading `/`), so the page also works under a sub-path. Every
        // script and style sheet the page is built from, and its icon, is loaded by hash: taken
        // from the table, so a file added to `build.rs` that index.html forgets fails here.
        // The service worker is the exception: it is registered by its fixed name (a new one
        // is found by the browser comparing its bytes), never loaded as a script.
        let by_hash = ASSETS.iter().filter(|a| {
            (a.name.ends_with(".js") && a.name != "sw.js")
                || a.name.ends_with(".css")
                || a.name == "icon.svg"
        });
        assert!(
            by_hash.clone().count() >= 5,
            "the table lost the page's scripts"
        );
        for a in by_hash {
            let name = a.name;
            assert!(
                index.contains(&format!("\"{name}?v={}\"", a.hash)),
                "index.html must load {name}?v={}",
                a.hash
            );
        }
        for name in ["manifest.webmanifest", "apple-touch-icon.png"] {
            assert!(index.contains(&format!("\"{name}\"")), "{name}");
        }
        assert!(!index.contains("=\"/"), "an absolute address in index.html");
    }

    #[test]
    fn the_manifest_carries_the_page_title_and_no_id() {
        let cases = [
            ("Raspberry Pi", "Raspberry Pi"),
            ("Workshop panel", "Workshop"),
            ("Garage \"door\" \\ 🚪", "Garage"),
            ("Überwachungskamera-Steuerung", "Überwachungs"),
            ("", ""),
        ];
        for (title, short) in cases {
            let r = manifest(title, Conditions::default());
            assert_eq!(r.status, 200, "{title}");
            let m: serde_json::Value =
                serde_json::from_slice(&r.body).expect("the manifest is JSON");
            assert_eq!(m["name"], title);
            assert_eq!(m["short_name"], short, "{title:?}");
            assert_eq!(m["start_url"], "./");
            assert!(
                m.get("id").is_none(),
                "an id resolves against the site's root"
            );
            assert_eq!(
                header(&r, "content-type"),
                Some("application/manifest+json")
            );
            let etag = header(&r, "etag").unwrap_or_default().to_string();
            let again = manifest(
                title,
                Conditions {
                    if_none_match: Some(&etag),
                    ..Conditions::default()
                },
            );
            assert_eq!(again.status, 304);
            assert!(again.body.is_empty());
            let other = Conditions {
                if_none_match: Some(&etag),
                ..Conditions::default()
            };
            assert_eq!(manifest("another board", other).status, 200);
            let zipped = manifest(
                title,
                Conditions {
                    accept_encoding: Some("gzip"),
                    ..Conditions::default()
                },
            );
            assert_eq!(header(&zipped, "content-encoding"), Some("gzip"));
            let mut inflated = Vec::new();
            flate2::read::GzDecoder::new(&zipped.body[..])
                .read_to_end(&mut inflated)
                .expect("gzip");
            assert_eq!(inflated, r.body.to_vec());
            assert_ne!(header(&zipped, "etag"), Some(etag.as_str()));
        }
        assert_eq!(short_name("  Pi  "), "Pi");
    }

    #[test]
    fn content_types_by_extension() {
        let cases = [
            ("index.html", "text/html; charset=utf-8"),
            ("app.js", "text/javascript; charset=utf-8"),
            ("app.css", "text/css; charset=utf-8"),
            ("icon.svg", "image/svg+xml"),
            ("icon-192.png", "image/png"),
            ("favicon.ico", "image/x-icon"),
            ("manifest.webmanifest", "application/manifest+json"),
            ("data.json", "application/json"),
            ("README", "application/octet-stream"),
        ];
        for (name, want) in cases {
            assert_eq!(content_type(name), want, "{name}");
        }
        for a in ASSETS {
            assert_ne!(
                content_type(a.name),
                "application/octet-stream",
                "{}",
                a.name
            );
        }
    }

    #[test]
    fn every_asset_has_a_route_and_every_static_route_an_asset() {
        for a in ASSETS {
            let path = format!("/{}", a.name);
            let r = route("GET", &path);
            let routed = match r {
                Route::Index => "index.html",
                Route::Static(name) => name,
                other => panic!("{path} routes to {other:?}"),
            };
            assert_eq!(routed, a.name);
        }
        assert_eq!(route("GET", "/"), Route::Index);
        assert_eq!(route("GET", "/missing.js"), Route::NotFound);
    }

    #[test]
    fn accept_encoding_table() {
        let cases = [
            ("", false),
            ("gzip", true),
            ("gzip, deflate, br, zstd", true),
            ("br;q=1.0, gzip;q=0.8, *;q=0.1", true),
            ("GZIP", true),
            ("x-gzip", true),
            ("identity", false),
            ("deflate, br", false),
            ("*", true),
            ("gzip;q=0", false),
            ("gzip; q=0.0, *", false),
            ("*;q=0", false),
            ("br, *;q=0.5", true),
        ];
        for (value, want) in cases {
            assert_eq!(accepts_gzip(value), want, "{value:?}");
        }
    }

    fn header<'a>(r: &'a Reply, name: &str) -> Option<&'a str> {
        r.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_ref())
    }

    #[test]
    fn representations_validators_and_cache_rules() {
        let js = asset("app.js").unwrap();
        let index = asset("index.html").unwrap();
        let gz_tag = format!("\"{}-gz\"", js.hash);
        let id_tag = format!("\"{}\"", js.hash);
        let current = format!("v={}", js.hash);
        struct Case<'a> {
            asset: &'static Asset,
            when: Conditions<'a>,
            status: u16,
            encoding: Option<&'a str>,
            etag: &'a str,
            cache: &'a str,
        }
        let cases = [
            Case {
                asset: js,
                when: Conditions {
                    accept_encoding: Some("gzip, br"),
                    if_none_match: None,
                    query: Some(&current),
                },
                status: 200,
                encoding: Some("gzip"),
                etag: &gz_tag,
                cache: "public, max-age=31536000, immutable",
            },
            Case {
                asset: js,
                when: Conditions {
                    accept_encoding: None,
                    if_none_match: None,
                    query: Some("v=0000000000000000"),
                },
                status: 200,
                encoding: None,
                etag: &id_tag,
                cache: "no-cache",
            },
            Case {
                asset: js,
                when: Conditions {
                    accept_encoding: Some("gzip"),
                    if_none_match: Some(&gz_tag),
                    query: None,
                },
                status: 304,
                encoding: None,
                etag: &gz_tag,
                cache: "no-cache",
            },
            // The identity tag does not validate the gzip representation.
            Case {
                asset: js,
                when: Conditions {
                    accept_encoding: Some("gzip"),
                    if_none_match: Some(&id_tag),
                    query: None,
                },
                status: 200,
                encoding: Some("gzip"),
                etag: &gz_tag,
                cache: "no-cache",
            },
            Case {
                asset: js,
                when: Conditions {
                    accept_encoding: Some("gzip"),
                    if_none_match: Some("\"x\", W/\"nope\", *"),
                    query: None,
                },
                status: 304,
                encoding: None,
                etag: &gz_tag,
                cache: "no-cache",
            },
            // index.html is always revalidated, even when asked for with a hash.
            Case {
                asset: index,
                when: Conditions {
                    accept_encoding: Some("gzip"),
                    if_none_match: None,
                    query: Some(&format!("v={}", index.hash)),
                },
                status: 200,
                encoding: Some("gzip"),
                etag: &format!("\"{}-gz\"", index.hash),
                cache: "no-cache",
            },
        ];
        for (i, c) in cases.iter().enumerate() {
            let r = respond(c.asset, c.when);
            assert_eq!(r.status, c.status, "case {i}");
            assert_eq!(header(&r, "content-encoding"), c.encoding, "case {i}");
            assert_eq!(header(&r, "etag"), Some(c.etag), "case {i}");
            assert_eq!(header(&r, "cache-control"), Some(c.cache), "case {i}");
            assert_eq!(header(&r, "vary"), Some("Accept-Encoding"), "case {i}");
            if c.status == 304 {
                assert!(r.body.is_empty(), "case {i}");
            } else if c.encoding.is_none() {
                assert_eq!(r.body.len(), c.asset.len, "case {i}");
            } else {
                assert_eq!(&r.body[..], c.asset.gzip, "case {i}");
            }
        }
        let page = respond(index, Conditions::default());
        assert!(header(&page, "content-security-policy").is_some());
        assert_eq!(
            header(&page, "content-type"),
            Some("text/html; charset=utf-8")
        );
    }
}
