//! The embedded web page over real HTTP: identity and gzip representations, validators and
//! the 304 answer, and that nothing beyond the page's own files is served. The browser tests
//! (tests/web) drive the page itself; these run with `cargo test`, without a browser.

use crate::client::{Request, send};
use crate::harness::{Server, config_with, shell_action};

fn server() -> Server {
    Server::start(config_with(vec![shell_action("date", "date")]))
}

#[test]
fn the_page_is_served_whole_to_a_client_without_gzip() {
    let server = server();
    let resp = send(server.addr, &Request::get("/"));
    assert_eq!(resp.status, 200);
    assert_eq!(
        resp.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(resp.header("content-encoding"), None);
    assert_eq!(resp.header("cache-control"), Some("no-cache"));
    assert_eq!(resp.header("vary"), Some("Accept-Encoding"));
    let etag = resp.header("etag").expect("an ETag").to_string();
    assert!(!etag.ends_with("-gz\""), "{etag}");
    let html = resp.text();
    // Relative, so the page also works under a sub-path behind a reverse proxy.
    assert!(html.contains("<script src=\"app.js?v="), "{html}");
    assert_eq!(send(server.addr, &Request::get("/index.html")).text(), html);

    let again = send(
        server.addr,
        &Request::get("/").header("If-None-Match", &etag),
    );
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
}

#[test]
fn files_go_out_gzipped_to_a_browser_and_revalidate() {
    let server = server();
    for path in [
        "/app.js",
        "/output.js",
        "/looks.js",
        "/views.js",
        "/app.css",
        "/icon.svg",
        "/manifest.webmanifest",
        "/icon-192.png",
    ] {
        let resp = send(
            server.addr,
            &Request::get(path).header("Accept-Encoding", "gzip, deflate, br"),
        );
        assert_eq!(resp.status, 200, "{path}");
        assert_eq!(resp.header("content-encoding"), Some("gzip"), "{path}");
        assert_eq!(&resp.body[..2], &[0x1f, 0x8b], "{path}");
        let etag = resp.header("etag").expect("an ETag").to_string();
        assert!(etag.ends_with("-gz\""), "{etag}");
        let again = send(
            server.addr,
            &Request::get(path)
                .header("Accept-Encoding", "gzip")
                .header("If-None-Match", &etag),
        );
        assert_eq!(again.status, 304, "{path}");
    }
}

#[test]
fn only_the_pages_own_files_are_served() {
    let server = server();
    for path in [
        "/app.jsx",
        "/src/web/assets/app.js",
        "/../Cargo.toml",
        "/%2e%2e/x",
        "/index.htm",
    ] {
        assert_eq!(send(server.addr, &Request::get(path)).status, 404, "{path}");
    }
    assert_eq!(send(server.addr, &Request::post("/app.js")).status, 405);
}

#[test]
fn the_manifest_and_icons_have_their_types() {
    let server = server();
    for (path, kind) in [
        ("/manifest.webmanifest", "application/manifest+json"),
        ("/apple-touch-icon.png", "image/png"),
        ("/icon-512.png", "image/png"),
        ("/icon-maskable-512.png", "image/png"),
    ] {
        let resp = send(server.addr, &Request::get(path));
        assert_eq!(resp.status, 200, "{path}");
        assert_eq!(resp.header("content-type"), Some(kind), "{path}");
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&send(server.addr, &Request::get("/manifest.webmanifest")).text())
            .expect("the manifest is JSON");
    assert_eq!(manifest["display"], "standalone");
    // Relative to the manifest, so a sub-path keeps working; no `id`, which would resolve
    // against the site's root: the app's id is then its start_url.
    assert_eq!(manifest["start_url"], "./");
    assert!(manifest.get("id").is_none(), "{manifest}");
    // Named after the board (the harness's config keeps the default title).
    assert_eq!(manifest["name"], "actiond");
    for icon in manifest["icons"].as_array().expect("icons") {
        let src = icon["src"].as_str().expect("src");
        assert!(!src.starts_with('/'), "{src}");
        assert_eq!(
            send(server.addr, &Request::get(&format!("/{src}"))).status,
            200
        );
    }
}

/// The manifest names the app after the config's `pageTitle`, so two boards on one home
/// screen are told apart.
#[test]
fn the_manifest_is_named_after_the_page_title() {
    let mut config = config_with(vec![shell_action("date", "date")]);
    config["pageTitle"] = serde_json::json!("Garage \"door\" 🚪");
    let server = Server::start(config);
    let manifest: serde_json::Value =
        serde_json::from_str(&send(server.addr, &Request::get("/manifest.webmanifest")).text())
            .expect("the manifest is JSON");
    assert_eq!(manifest["name"], "Garage \"door\" 🚪");
    assert_eq!(manifest["short_name"], "Garage");
}
