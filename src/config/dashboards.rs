//! Configured dashboards: the `dashboards:` tree of components, each resolved to the type
//! clients see, with the actions written inline in them (`inlineAction`) read as actions of
//! their own. Which actions a dashboard places, and what a caller sees of it, is decided by
//! `crate::dashboards` and the API.

use super::actions::{self, ActionContext, Draft, Inherited};
use super::checker::{Checker, path_or};
use super::schema::COMPONENT;
use super::tree::{Node, index_path, key_path};
use super::{Action, Problem};

/// A dashboard component, recursive; top-level components are dashboards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    pub title: String,
    pub kind: ComponentKind,
    pub entity: Option<String>,
    pub icon: String,
    pub css_class: String,
    pub contents: Vec<Component>,
}

/// A dashboard component's type as clients see it. A component written without a type (or
/// with one the web page does not know) is resolved at load the way OliveTin shows it: a
/// directory when it has contents, else a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComponentKind {
    /// A link to the action with the component's title.
    Link,
    Fieldset,
    Directory,
    /// HTML written in the config, shown as it is.
    Display,
    StdoutMostRecentExecution,
}

impl ComponentKind {
    const ALL: [ComponentKind; 5] = [
        ComponentKind::Link,
        ComponentKind::Fieldset,
        ComponentKind::Directory,
        ComponentKind::Display,
        ComponentKind::StdoutMostRecentExecution,
    ];

    /// The type as a config writes it and the API sends it.
    pub fn as_str(self) -> &'static str {
        match self {
            ComponentKind::Link => "link",
            ComponentKind::Fieldset => "fieldset",
            ComponentKind::Directory => "directory",
            ComponentKind::Display => "display",
            ComponentKind::StdoutMostRecentExecution => "stdout-most-recent-execution",
        }
    }

    /// The type written exactly so, if it is one.
    pub fn parse(text: &str) -> Option<ComponentKind> {
        ComponentKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

impl Component {
    /// Whether this component is a link to an action (by title).
    pub fn is_link(&self) -> bool {
        self.kind == ComponentKind::Link
    }
}

/// Reads one component and, depth first, its contents. An inline action joins `drafts`.
pub(super) fn component(
    c: &mut Checker<'_>,
    entries: &[(String, Node)],
    path: &str,
    parent_entity: Option<&str>,
    ctx: &ActionContext<'_>,
    drafts: &mut Vec<Draft>,
) -> Component {
    let f = c.fields(entries, path, COMPONENT);
    let mut title = c.text_or(f.get("title"), "");
    let written = c.text_or(f.get("type"), "").trim().to_string();
    let mut kind = ComponentKind::parse(&written);
    let entity = c.text(f.get("entity")).filter(|e| !e.is_empty());
    // A child inherits its fieldset's entity, as in OliveTin, so an inline action inside an
    // entity fieldset is an entity action.
    let effective_entity = entity.as_deref().or(parent_entity);

    if let Some(entries) = c.mapping(f.get("inlineAction")) {
        let inherited = Inherited {
            title: (!title.is_empty()).then_some(title.as_str()),
            entity: effective_entity,
        };
        let action_path = path_or(f.get("inlineAction"), "");
        let action_title = actions::collect(c, entries, action_path, ctx, inherited, drafts);
        if title.is_empty() {
            title = action_title;
        }
        if written.is_empty() || written.eq_ignore_ascii_case("action") {
            kind = Some(ComponentKind::Link);
        }
    }

    let mut contents = Vec::new();
    for (entries, child_path) in c.mappings(f.get("contents")) {
        contents.push(component(
            c,
            entries,
            &child_path,
            effective_entity,
            ctx,
            drafts,
        ));
    }
    // No type, or one the web page does not know: OliveTin's own resolution, something with
    // contents is a directory, anything else is a link.
    let resolved = if contents.is_empty() {
        ComponentKind::Link
    } else {
        ComponentKind::Directory
    };
    if kind.is_none() && !written.is_empty() {
        c.warn(
            path_or(f.get("type"), path),
            format!(
                "unknown component type {written:?}: shown as a {}",
                resolved.as_str()
            ),
        );
    }
    let kind = kind.unwrap_or(resolved);
    if kind == ComponentKind::Display {
        super::icons::warn_unsafe_html_placeholder(c, path_or(f.get("title"), path), &title);
    }
    Component {
        title,
        kind,
        entity,
        icon: {
            let icon = c.text_or(f.get("icon"), "");
            let at = path_or(f.get("icon"), path);
            super::icons::warn_online_icon(c, at, &icon);
            super::icons::warn_unsafe_html_placeholder(c, at, &icon);
            icon
        },
        css_class: c.text_or(f.get("cssClass"), ""),
        contents,
    }
}

/// Warns about dashboard links whose title names no action (such a link is not shown).
/// Top-level items are dashboards, so links start inside them; paths count components as
/// written in the main file.
pub(super) fn warn_dangling_links(
    dashboards: &[Component],
    actions: &[Action],
    warnings: &mut Vec<Problem>,
) {
    for (i, d) in dashboards.iter().enumerate() {
        let path = key_path(&index_path("dashboards", i), "contents");
        dangling_links(&d.contents, actions, &path, warnings);
    }
}

fn dangling_links(
    components: &[Component],
    actions: &[Action],
    path: &str,
    warnings: &mut Vec<Problem>,
) {
    for (i, c) in components.iter().enumerate() {
        let here = index_path(path, i);
        if c.is_link() && !actions.iter().any(|a| a.title == c.title) {
            warnings.push(Problem {
                path: here.clone(),
                message: format!("no action is titled {:?}: this link is not shown", c.title),
            });
        }
        // A latest-output component names its action by id, or by title.
        if c.kind == ComponentKind::StdoutMostRecentExecution
            && !actions
                .iter()
                .any(|a| a.id == c.title || a.title == c.title)
        {
            warnings.push(Problem {
                path: here.clone(),
                message: format!(
                    "no action has the id or title {:?}: this output is not shown",
                    c.title
                ),
            });
        }
        dangling_links(&c.contents, actions, &key_path(&here, "contents"), warnings);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::fixtures::*;

    #[test]
    fn components_resolve_to_the_types_clients_see() {
        let (c, warnings) = ok("
actions:
  - {title: Ping server1, shell: ping}
dashboards:
  - title: My Servers
    contents:
      - title: All
        type: fieldset
        cssClass: wide
        contents:
          - title: Ping server1
          - title: More
            type: directory
            icon: '&#128193;'
            contents:
              - {type: display, title: '<b>hi</b>'}
      - {type: fieldset, entity: server, title: '{{ .CurrentEntity.name }}', contents: [{title: Ping server1}]}
");
        assert!(warnings.is_empty(), "{warnings:?}");
        let leaf = |title: &str, kind: ComponentKind| Component {
            title: title.into(),
            kind,
            entity: None,
            icon: String::new(),
            css_class: String::new(),
            contents: vec![],
        };
        assert_eq!(
            c.dashboards,
            vec![Component {
                title: "My Servers".into(),
                contents: vec![
                    Component {
                        title: "All".into(),
                        kind: ComponentKind::Fieldset,
                        css_class: "wide".into(),
                        contents: vec![
                            leaf("Ping server1", ComponentKind::Link),
                            Component {
                                title: "More".into(),
                                kind: ComponentKind::Directory,
                                icon: "&#128193;".into(),
                                contents: vec![leaf("<b>hi</b>", ComponentKind::Display)],
                                ..leaf("", ComponentKind::Directory)
                            },
                        ],
                        ..leaf("", ComponentKind::Directory)
                    },
                    Component {
                        title: "{{ .CurrentEntity.name }}".into(),
                        kind: ComponentKind::Fieldset,
                        entity: Some("server".into()),
                        contents: vec![leaf("Ping server1", ComponentKind::Link)],
                        ..leaf("", ComponentKind::Directory)
                    },
                ],
                ..leaf("", ComponentKind::Directory)
            }]
        );
        assert_warning(
            "dashboards:\n  - {title: D, contents: [{title: a, type: carousel}]}\n",
            "dashboards[0].contents[0].type",
            "unknown component type \"carousel\": shown as a link",
        );
    }

    #[test]
    fn inline_actions_become_actions_and_links() {
        let (c, warnings) = ok("
entities: [{file: people.yaml, name: person}]
actions:
  - {title: Base, shell: echo base}
dashboards:
  - title: D
    contents:
      - type: action
        inlineAction: {title: First Action, shell: echo first}
      - title: Greet
        inlineAction: {shell: echo hi, icon: ping}
      - type: fieldset
        entity: person
        title: People
        contents:
          - title: 'Wave at {{ person.name }}'
            inlineAction: {shell: echo wave}
");
        assert!(warnings.is_empty(), "{warnings:?}");
        let summary: Vec<(&str, &str, Option<&str>)> = c
            .actions
            .iter()
            .map(|a| (a.id.as_str(), a.title.as_str(), a.entity.as_deref()))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("base", "Base", None),
                ("firstAction", "First Action", None),
                ("greet", "Greet", None),
                (
                    "waveAtPersonName",
                    "Wave at {{ person.name }}",
                    Some("person")
                ),
            ]
        );
        let d = &c.dashboards[0];
        assert_eq!(
            (d.contents[0].title.as_str(), d.contents[0].kind),
            ("First Action", ComponentKind::Link)
        );
        assert_eq!(
            (d.contents[1].title.as_str(), d.contents[1].kind),
            ("Greet", ComponentKind::Link)
        );
        assert_eq!(c.actions[2].icon, "&#x1f4e1;");
        assert_error(
            "dashboards:\n  - title: D\n    contents:\n      - inlineAction: {title: x}\n",
            "dashboards[0].contents[0].inlineAction",
            "needs shell",
        );
    }

    #[test]
    fn links_to_no_action_warn() {
        let text = "actions:\n  - {title: Real, shell: x}\ndashboards:\n  - title: D\n    contents:\n      - title: Real\n      - title: Ghost\n";
        assert_warning(
            text,
            "dashboards[0].contents[1]",
            "no action is titled \"Ghost\"",
        );
    }
}
