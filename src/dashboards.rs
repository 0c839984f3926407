//! Dashboards (SPEC §7), as far as the API needs them so far: which actions a configured
//! dashboard places (they leave the default dashboard), and the titles of the root
//! dashboards a caller sees (Init's `rootDashboards`). Pure functions of the config; what a
//! caller may view is asked of the permission function by the caller of these.

use std::collections::HashSet;

use crate::config::{Action, Component, Config};
use crate::engine::Binding;

/// The default dashboard's title.
pub const DEFAULT_TITLE: &str = "Actions";

/// The component type that shows the latest output of one action.
pub const RECENT_OUTPUT: &str = "stdout-most-recent-execution";

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

/// The default dashboard's bindings for a caller: visible, not hidden, not placed on a
/// configured dashboard (entity bindings by their action's configured title), in config
/// order.
pub fn default_bindings<'c>(
    config: &Config,
    bindings: &'c [Binding],
    may_view: impl Fn(&Action) -> bool,
) -> Vec<&'c Binding> {
    let placed = placed_titles(&config.dashboards);
    bindings
        .iter()
        .filter(|b| {
            !b.action.hidden && !placed.contains(b.template_title.as_str()) && may_view(&b.action)
        })
        .collect()
}

/// Init's `rootDashboards`: "Actions" first when the default dashboard has anything for the
/// caller, then the configured dashboards in config order.
pub fn root_titles(
    config: &Config,
    bindings: &[Binding],
    may_view: impl Fn(&Action) -> bool,
) -> Vec<String> {
    let mut out = Vec::new();
    if !default_bindings(config, bindings, may_view).is_empty() {
        out.push(DEFAULT_TITLE.to_string());
    }
    out.extend(config.dashboards.iter().map(|d| d.title.clone()));
    out
}

/// The titles of the configured dashboards that show an entity type (GetEntities'
/// `usedOnDashboards`).
pub fn dashboards_using<'c>(config: &'c Config, entity_type: &str) -> Vec<&'c str> {
    fn uses(c: &Component, t: &str) -> bool {
        c.entity.as_deref() == Some(t) || c.contents.iter().any(|x| uses(x, t))
    }
    config
        .dashboards
        .iter()
        .filter(|d| uses(d, entity_type))
        .map(|d| d.title.as_str())
        .collect()
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
