//! Action ids: which configured ids are valid, how an id is derived from a title when none is
//! configured, and how every action gets a unique one. Ids appear in URLs and history
//! records, so a derived id depends only on the titles and their order, and stays the same
//! while the config does.

use std::collections::{HashMap, HashSet};

use super::Problem;
use super::tree::key_path;

/// One action's claim to an id: the id as configured (`None`: derive it from the title),
/// and the path of the action's mapping, for problems.
pub(super) struct Claim<'a> {
    pub configured: Option<&'a str>,
    pub title: &'a str,
    pub path: &'a str,
}

/// Whether `id` may be configured: 1 to 64 ASCII letters, digits, `_` or `-`.
pub(super) fn is_valid(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The id of every claim, in order, and the duplicates: each with the index of its claim and
/// the error at its `id` key. Configured ids come first; a configured id already taken by an
/// earlier action is a duplicate, and that claim is given an id derived from its title
/// instead, so the action it belongs to (disabled by the error) can still be named. Ids
/// derived from titles are made unique with a numeric suffix.
pub(super) fn settle(claims: &[Claim<'_>]) -> (Vec<String>, Vec<(usize, Problem)>) {
    let mut duplicates = Vec::new();
    // Id → the path of the action that has it.
    let mut used: HashMap<String, &str> = HashMap::new();
    for (index, claim) in claims.iter().enumerate() {
        if let Some(id) = claim.configured {
            if let Some(first) = used.get(id) {
                duplicates.push((
                    index,
                    Problem {
                        path: key_path(claim.path, "id"),
                        message: format!("duplicate id {id:?} (first used by {first})"),
                    },
                ));
            } else {
                used.insert(id.to_string(), claim.path);
            }
        }
    }
    let duplicate: HashSet<usize> = duplicates.iter().map(|(i, _)| *i).collect();
    // Derived base → the suffix to try next: suffixes below it are taken already, so a
    // thousand actions of one title are numbered in linear time.
    let mut next: HashMap<String, u32> = HashMap::new();
    let mut ids = Vec::with_capacity(claims.len());
    for (index, claim) in claims.iter().enumerate() {
        let id = match claim.configured {
            Some(id) if !duplicate.contains(&index) => id.to_string(),
            _ => {
                let mut base = derive(claim.title);
                if base.is_empty() {
                    base = format!("action{}", index + 1);
                }
                let mut id = base.clone();
                let n = next.entry(base.clone()).or_insert(2);
                while used.contains_key(&id) {
                    let suffix = n.to_string();
                    let keep = base.len().min(64 - suffix.len());
                    id = format!("{}{suffix}", &base[..keep]);
                    *n += 1;
                }
                used.insert(id.clone(), claim.path);
                id
            }
        };
        ids.push(id);
    }
    (ids, duplicates)
}

/// An id from a title in lowerCamelCase ASCII alphanumerics: "Restart Docker" →
/// `restartDocker`. Words are split at ASCII punctuation and spaces; other characters
/// (accents, emoji) are dropped; at most 64 characters. May be empty.
fn derive(title: &str) -> String {
    let mut id = String::new();
    for word in title.split(|c: char| c.is_ascii() && !c.is_ascii_alphanumeric()) {
        let word: String = word.chars().filter(char::is_ascii_alphanumeric).collect();
        let mut chars = word.chars();
        let Some(first) = chars.next() else {
            continue;
        };
        if id.is_empty() {
            id.push_str(&word.to_ascii_lowercase());
        } else {
            id.push(first.to_ascii_uppercase());
            id.push_str(chars.as_str());
        }
    }
    id.truncate(64);
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::fixtures::*;

    #[test]
    fn derived_ids() {
        let cases: &[(&str, &str)] = &[
            ("Restart Docker", "restartDocker"),
            ("Ping the Internet", "pingTheInternet"),
            ("restart HTTPD now", "restartHTTPDNow"),
            (
                "OliveTin Post-Install Healthcheck",
                "olivetinPostInstallHealthcheck",
            ),
            ("Café au lait", "cafAuLait"),
            ("🚀 Launch!", "launch"),
            ("{{ server.name }} Wake on Lan", "serverNameWakeOnLan"),
            ("2 seconds", "2Seconds"),
        ];
        for (title, id) in cases {
            assert_eq!(derive(title), *id, "{title}");
        }
        assert_eq!(derive(&"word ".repeat(40)).len(), 64);
        assert_eq!(derive("日本語"), "");
    }

    #[test]
    fn derived_ids_are_unique_and_configured_ids_win() {
        let (c, _) = ok("
actions:
  - {title: Restart Docker, shell: a}
  - {title: 'restart docker', shell: b}
  - {title: 日本語, shell: c}
  - {title: Restart Docker!, shell: d}
  - {id: restartDocker2, title: Other, shell: e}
");
        let ids: Vec<&str> = c.actions.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(
            ids,
            vec![
                "restartDocker",
                "restartDocker3",
                "action3",
                "restartDocker4",
                "restartDocker2"
            ]
        );
    }
}
