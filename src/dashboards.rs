//! Dashboards (SPEC §7), as far as the API needs them so far: which actions a configured
//! dashboard places (they leave the default dashboard), and the titles of the root
//! dashboards a caller sees (Init's `rootDashboards`). Pure functions of the config; what a
//! caller may view is asked of the permission function by the caller of these.

use std::collections::HashSet;

use crate::config::{Action, Component, Config};

/// The default dashboard's title.
pub const DEFAULT_TITLE: &str = "Actions";

/// Whether a component is a link to an action (by title): type `link`, or no type and no
/// contents, as OliveTin configs write them.
pub fn is_link(c: &Component) -> bool {
    c.kind == "link" || (c.kind.is_empty() && c.contents.is_empty())
}

/// Whether a component is a directory: type `directory`, or no type with contents (OliveTin
/// shows an untyped item with contents as a folder).
pub fn is_directory(c: &Component) -> bool {
    c.kind == "directory" || (c.kind.is_empty() && !c.contents.is_empty())
}

/// The titles of the actions linked anywhere on the configured dashboards.
pub fn placed_titles(components: &[Component]) -> HashSet<&str> {
    let mut out = HashSet::new();
    let mut stack: Vec<&Component> = components.iter().collect();
    while let Some(c) = stack.pop() {
        if is_link(c) {
            out.insert(c.title.as_str());
        }
        stack.extend(c.contents.iter());
    }
    out
}

/// The default dashboard's actions for a caller: visible, not hidden, not placed elsewhere,
/// not bound to entities (those appear per instance, on entity fieldsets), in config order.
pub fn default_actions(config: &Config, may_view: impl Fn(&Action) -> bool) -> Vec<&Action> {
    let placed = placed_titles(&config.dashboards);
    config
        .actions
        .iter()
        .filter(|a| {
            !a.hidden && a.entity.is_none() && !placed.contains(a.title.as_str()) && may_view(a)
        })
        .collect()
}

/// Init's `rootDashboards`: "Actions" first when the default dashboard has anything for the
/// caller, then the configured dashboards in config order.
pub fn root_titles(config: &Config, may_view: impl Fn(&Action) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    if !default_actions(config, may_view).is_empty() {
        out.push(DEFAULT_TITLE.to_string());
    }
    out.extend(config.dashboards.iter().map(|d| d.title.clone()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component(title: &str, kind: &str, contents: Vec<Component>) -> Component {
        Component {
            title: title.into(),
            kind: kind.into(),
            entity: None,
            icon: String::new(),
            css_class: String::new(),
            contents,
        }
    }

    #[test]
    fn links_are_found_at_any_depth() {
        let dash = vec![component(
            "Home",
            "",
            vec![
                component("Reboot", "", vec![]),
                component("Lights", "fieldset", vec![component("On", "link", vec![])]),
                component("Info", "display", vec![]),
            ],
        )];
        let placed = placed_titles(&dash);
        assert_eq!(placed, HashSet::from(["Reboot", "On"]));
    }
}
