//! The `entities:` list: which file holds the instances of which entity type. Reading the
//! files is `crate::entities`'; here each entry only needs its file (resolved against the
//! config's directory) and its type name.

use std::path::PathBuf;

use super::checker::Checker;
use super::schema::ENTITY;
use super::tree::Node;

/// `entities: [{file, name}]`; the file path resolved against the config's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntitySource {
    pub file: PathBuf,
    pub name: String,
}

/// One entry; `None` (with an error for each missing key) when its file or name is missing.
pub(super) fn source(
    c: &mut Checker<'_>,
    entries: &[(String, Node)],
    path: &str,
) -> Option<EntitySource> {
    let f = c.fields(entries, path, ENTITY);
    let file = c.text(f.get("file")).filter(|s| !s.trim().is_empty());
    let name = c.text(f.get("name")).filter(|s| !s.trim().is_empty());
    if file.is_none() {
        c.error(path, "an entity needs a file (YAML list or JSON objects)");
    }
    if name.is_none() {
        c.error(
            path,
            "an entity needs a name (the type its actions refer to)",
        );
    }
    Some(EntitySource {
        file: c.resolve(file?.trim()),
        name: name?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::fixtures::*;

    #[test]
    fn entity_files_resolve_against_the_config_directory() {
        let (c, warnings) = ok("
entities:
  - {file: entities/servers.yaml, name: server}
  - {file: /abs/containers.json, name: container}
");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            c.entities,
            vec![
                EntitySource {
                    file: base().join("entities/servers.yaml"),
                    name: "server".into()
                },
                EntitySource {
                    file: PathBuf::from("/abs/containers.json"),
                    name: "container".into()
                },
            ]
        );
        assert_error("entities:\n  - {name: n}\n", "entities[0]", "needs a file");
        assert_error("entities:\n  - {file: f}\n", "entities[0]", "needs a name");
    }
}
