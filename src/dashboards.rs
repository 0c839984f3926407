//! Dashboards as the API needs them beyond rendering them: which actions a configured
//! dashboard places (they leave the default dashboard), the default dashboard itself, the
//! titles of the root dashboards a caller sees (Init's `rootDashboards`), and which
//! dashboards show an entity type. Pure functions of the config; what a caller may view is
//! asked of the permission function by the caller of these, and a component's type was
//! resolved at load (`config::ComponentKind`).

use std::collections::HashSet;

use crate::config::{Action, Component, Config};
use crate::engine::Binding;

/// The default dashboard's title.
pub const DEFAULT_TITLE: &str = "Actions";

/// The titles of the actions linked anywhere on the configured dashboards.
pub fn placed_titles(components: &[Component]) -> HashSet<&str> {
    let mut out = HashSet::new();
    let mut stack: Vec<&Component> = components.iter().collect();
    while let Some(c) = stack.pop() {
        if c.is_link() {
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
    use crate::config::ComponentKind;

    fn component(title: &str, kind: ComponentKind, contents: Vec<Component>) -> Component {
        Component {
            title: title.into(),
            kind,
            entity: None,
            icon: String::new(),
            css_class: String::new(),
            contents,
        }
    }

    #[test]
    fn links_are_found_at_any_depth() {
        use ComponentKind::{Directory, Display, Fieldset, Link};
        let dash = vec![component(
            "Home",
            Directory,
            vec![
                component("Reboot", Link, vec![]),
                component("Lights", Fieldset, vec![component("On", Link, vec![])]),
                component("Info", Display, vec![]),
            ],
        )];
        let placed = placed_titles(&dash);
        assert_eq!(placed, HashSet::from(["Reboot", "On"]));
    }
}
