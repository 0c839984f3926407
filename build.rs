//! Build script: prepares the web page's files (src/web/assets) for embedding. Each file is
//! gzipped once here, at the best level, so the binary carries only the compressed bytes and
//! the server never compresses at run time. It also computes each file's content hash (the
//! strong ETag) and writes the hashes of the files index.html names as `@v:NAME@` into it, so
//! a new build changes their URLs (`app.js?v=HASH`) and browsers may cache them for a year;
//! the service worker (`sw.js`) is stamped the same way, so a new offline page installs anew.
//! It must not read anything outside src/web/assets.
//!
//! `FILES` is the one list of the page's files: the server answers `GET /NAME` for exactly
//! these (the route table looks names up in the generated table), so adding a file to the
//! page is one line here. A file in the directory that the list does not name fails the
//! build, so none is forgotten (hidden files and `~` backups aside: editors leave those).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// The files of the page, in the order they are listed in the generated table; index.html
/// first. Each is served at `/NAME` (and index.html at `/` too); its type comes from its
/// extension (`web::content_type`).
const FILES: &[&str] = &[
    "index.html",
    "app.js",
    "output.js",
    "looks.js",
    "views.js",
    "forms.js",
    "sheet.js",
    "app.css",
    "icon.svg",
    "manifest.webmanifest",
    "icon-192.png",
    "icon-512.png",
    "icon-maskable-512.png",
    "apple-touch-icon.png",
    "sw.js",
    "offline.html",
];

/// The files whose `@v:NAME@` marks become NAME's hash.
const STAMPED: &[&str] = &["index.html", "sw.js"];

fn main() {
    let src = Path::new("src/web/assets");
    println!("cargo:rerun-if-changed=src/web/assets");
    assert_eq!(FILES[0], "index.html", "index.html comes first in FILES");
    for entry in std::fs::read_dir(src).expect("src/web/assets is readable") {
        let name = entry.expect("src/web/assets is readable").file_name();
        let name = name.to_string_lossy();
        // An editor's swap or backup file is not part of the page.
        if name.starts_with('.') || name.ends_with('~') {
            continue;
        }
        assert!(
            FILES.contains(&name.as_ref()),
            "src/web/assets/{name} is not in build.rs FILES: add it there to serve it, or remove it"
        );
    }
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);

    let mut texts: Vec<(String, Vec<u8>)> = FILES
        .iter()
        .map(|name| {
            let path = src.join(name);
            println!("cargo:rerun-if-changed={}", path.display());
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            (name.to_string(), bytes)
        })
        .collect();

    // index.html and sw.js name other files as `@v:NAME@`; replace each with NAME's hash
    // (of the file as written: the stamped files do not name each other).
    let hashes: Vec<(String, String)> = texts
        .iter()
        .map(|(name, bytes)| (name.clone(), hash(bytes)))
        .collect();
    for (name, bytes) in texts
        .iter_mut()
        .filter(|(n, _)| STAMPED.contains(&n.as_str()))
    {
        let mut text = String::from_utf8(bytes.clone()).expect("a stamped file is UTF-8");
        for (other, h) in &hashes {
            text = text.replace(&format!("@v:{other}@"), h);
        }
        assert!(
            !text.contains("@v:"),
            "{name} names a file that is not in FILES"
        );
        *bytes = text.into_bytes();
    }

    let mut table = String::from("pub static ASSETS: &[Asset] = &[\n");
    for (name, bytes) in &texts {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(bytes).expect("gzip into memory");
        let gz = gz.finish().expect("gzip into memory");
        let gz_path = out.join(format!("{name}.gz"));
        std::fs::write(&gz_path, gz).expect("write to OUT_DIR");
        writeln!(
            table,
            "    Asset {{ name: {name:?}, hash: {:?}, len: {}, gzip: include_bytes!({:?}) }},",
            hash(bytes),
            bytes.len(),
            gz_path.display().to_string(),
        )
        .expect("write to a String");
    }
    table.push_str("];\n");
    std::fs::write(out.join("web_assets.rs"), table).expect("write to OUT_DIR");
}

/// FNV-1a, 64 bits, as 16 hex digits: enough to tell two builds of a file apart; it needs no
/// crate and nothing here is adversarial (the inputs are our own files).
fn hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}
