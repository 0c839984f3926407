//! Every relative link of README.md and docs/*.md resolves: the file (or directory) it names
//! exists inside the repository, and its `#anchor`, when it has one, is a heading of the
//! Markdown file it names, spelled as GitHub spells heading anchors. Pure: it reads the
//! files and nothing else, so a moved or renamed section fails `cargo test`, not a reader.
//!
//! What counts as a link: `[text](target)` and `![alt](target)` outside code (fenced blocks and
//! inline code spans are skipped), reference definitions (`[name]: target`), and the `src` and
//! `href` attributes of HTML written into the Markdown. A target with a scheme (`https:`,
//! `mailto:`) is not checked: this test never reaches the network.

use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file of docs/, as paths relative to the repository.
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![PathBuf::from("README.md")];
    let mut found: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(root()).expect("inside").to_path_buf())
        .collect();
    found.sort();
    docs.extend(found);
    docs
}

/// The text with fenced code blocks and inline code spans blanked, line breaks kept, so that
/// a link written as an example inside code is not read as one.
fn without_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut fence: Option<&str> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => {
                fence = Some(m);
                out.push('\n');
                continue;
            }
            (Some(open), Some(m)) if open == m => {
                fence = None;
                out.push('\n');
                continue;
            }
            (Some(_), _) => {
                if line.ends_with('\n') {
                    out.push('\n');
                }
                continue;
            }
            (None, None) => {}
        }
        // Inline code: a run of backticks up to the next run of the same length.
        let bytes = line.as_bytes();
        let mut i = 0;
        let mut start = 0;
        while i < bytes.len() {
            if bytes[i] != b'`' {
                i += 1;
                continue;
            }
            let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
            let ticks = &line[i..i + run];
            match line[i + run..].find(ticks) {
                Some(close) => {
                    out.push_str(&line[start..i]);
                    let end = i + run + close + run;
                    out.extend(std::iter::repeat_n(' ', end - i));
                    i = end;
                    start = end;
                }
                None => i += run,
            }
        }
        out.push_str(&line[start..]);
    }
    out
}

/// Every link target of a document, with its line number.
fn links(text: &str) -> Vec<(usize, String)> {
    let text = without_code(text);
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        // [text](target), ![alt](target); the target ends at its balancing parenthesis.
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let mut depth = 1;
            let mut end = None;
            for (k, c) in after.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(k);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let Some(end) = end else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push((n, target.trim_matches(['<', '>']).to_string()));
            rest = &after[end..];
        }
        // [name]: target
        let trimmed = line.trim_start();
        if trimmed.starts_with('[')
            && let Some(close) = trimmed.find("]:")
            && !trimmed[..close].contains('(')
        {
            let target = trimmed[close + 2..].split_whitespace().next().unwrap_or("");
            out.push((n, target.to_string()));
        }
        // src="…" and href="…" of HTML.
        for attr in [" src=\"", " href=\""] {
            let mut rest = line;
            while let Some(at) = rest.find(attr) {
                let after = &rest[at + attr.len()..];
                let end = after.find('"').unwrap_or(after.len());
                out.push((n, after[..end].to_string()));
                rest = &after[end..];
            }
        }
    }
    out
}

/// The anchor GitHub gives a heading: its text without Markdown marks, lower-cased, every
/// character but letters, digits, spaces, `-` and `_` dropped, spaces made `-`.
fn slug(heading: &str) -> String {
    // A link in a heading anchors by its text.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        match rest[open..].find("](").and_then(|mid| {
            rest[open + mid..]
                .find(')')
                .map(|close| (open + mid, open + mid + close))
        }) {
            Some((mid, close)) => {
                text.push_str(&rest[..open]);
                text.push_str(&rest[open + 1..mid]);
                rest = &rest[close + 1..];
            }
            None => break,
        }
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file: one per heading (a repeated one gets `-1`, `-2`, …), and
/// any `id="…"` or `name="…"` of HTML in it.
fn anchors(text: &str) -> BTreeSet<String> {
    let stripped = without_code(text);
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = BTreeSet::new();
    // Lines of code are blank in `stripped`; a heading keeps its code spans (`rest_command`).
    for (line, outside) in text.lines().zip(stripped.lines()) {
        if outside.trim().is_empty() {
            continue;
        }
        let hashes = line.bytes().take_while(|&b| b == b'#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = slug(line[hashes..].trim());
            let count = seen.entry(base.clone()).or_insert(0);
            out.insert(if *count == 0 {
                base.clone()
            } else {
                format!("{base}-{count}")
            });
            *count += 1;
        }
        for attr in [" id=\"", " name=\""] {
            let mut rest = line;
            while let Some(at) = rest.find(attr) {
                let after = &rest[at + attr.len()..];
                let end = after.find('"').unwrap_or(after.len());
                out.insert(after[..end].to_string());
                rest = &after[end..];
            }
        }
    }
    out
}

/// `base/target` with `.` and `..` resolved lexically; None when it leaves the repository.
fn resolve(base: &Path, target: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in base.join(target).components() {
        match part {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

fn has_scheme(target: &str) -> bool {
    target.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// The problems of one link: None when it resolves.
fn check(doc: &Path, target: &str) -> Option<String> {
    if target.is_empty() {
        return Some("an empty target".into());
    }
    if has_scheme(target) {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        doc.to_path_buf()
    } else {
        let base = doc.parent().unwrap_or(Path::new(""));
        match resolve(base, path) {
            Some(f) => f,
            None => return Some("it points outside the repository".into()),
        }
    };
    let full = root().join(&file);
    if !full.exists() {
        return Some(format!("{} does not exist", file.display()));
    }
    let anchor = anchor?;
    if full.extension().is_none_or(|e| e != "md") {
        return Some(format!(
            "an anchor into {}, which is no Markdown",
            file.display()
        ));
    }
    let text = std::fs::read_to_string(&full).expect("read");
    let known = anchors(&text);
    (!known.contains(anchor)).then(|| format!("{} has no heading #{anchor}", file.display()))
}

#[test]
fn every_relative_link_of_readme_and_docs_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(root().join(&doc)).expect("read");
        for (line, target) in links(&text) {
            checked += 1;
            if let Some(problem) = check(&doc, &target) {
                broken.push(format!("{}:{line}: ({target}): {problem}", doc.display()));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser still right?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_parsers_read_links_and_headings_as_github_does() {
    let text = "# Home Assistant\n## Without a broker: `rest_command`\n## Triggers\n## Triggers\n\
                See [the bounds](#resource-bounds) and `[not](a-link.md)`.\n\
                ```md\n[nor](this.md)\n```\n<img src=\"docs/x.png\" alt=\"\">\n[ref]: other.md#top\n\
                ### Users, tokens and permissions\n### OliveTin's clients\n";
    let found: Vec<String> = links(text).into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        found,
        ["#resource-bounds", "docs/x.png", "other.md#top"],
        "{text}"
    );
    let known = anchors(text);
    for anchor in [
        "home-assistant",
        "without-a-broker-rest_command",
        "triggers",
        "triggers-1",
        "users-tokens-and-permissions",
        "olivetins-clients",
    ] {
        assert!(known.contains(anchor), "{anchor} not in {known:?}");
    }
    assert_eq!(
        resolve(Path::new("docs"), "../README.md"),
        Some("README.md".into())
    );
    assert_eq!(resolve(Path::new("docs"), "../../shared/SPEC.md"), None);
    assert!(has_scheme("https://example.net/") && !has_scheme("docs/a.md#b:c"));
}
