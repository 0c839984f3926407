//! What a caller can see of the configured actions: GetDashboard (the default dashboard and
//! the configured ones, nested directories included) and GetActionBinding, both built from
//! the seed's `Action` message with `canExec` decided per caller. Only what the caller may
//! view is shown. Entities and their fieldsets arrive with entity files (a later step).

use super::dto::{
    ActionJson, ArgumentJson, BindingReply, ChoiceJson, ComponentJson, DashboardJson,
    DashboardReply, to_json,
};
use super::{App, Ctx};
use crate::config::{Action, Component, Config};
use crate::dashboards::{self, DEFAULT_TITLE};
use crate::permissions::{Caller, Decision, Verb, decide};
use crate::protocol::{Code, ConnectError, Fields};

/// The `Action` message of `action` for `caller`.
pub fn action_json<'a>(config: &'a Config, action: &'a Action, caller: &Caller) -> ActionJson<'a> {
    let order = config
        .actions
        .iter()
        .position(|a| a.id == action.id)
        .unwrap_or(0);
    ActionJson {
        binding_id: &action.id,
        title: &action.title,
        icon: &action.icon,
        can_exec: decide(&config.auth, caller, action, Verb::Exec) == Decision::Allow,
        arguments: action
            .arguments
            .iter()
            .map(|a| ArgumentJson {
                name: &a.name,
                title: &a.title,
                kind: &a.kind,
                default_value: a.default.as_deref().unwrap_or(""),
                choices: a
                    .choices
                    .iter()
                    .map(|c| ChoiceJson {
                        value: &c.value,
                        title: &c.title,
                    })
                    .collect(),
                description: &a.description,
                suggestions: &a.suggestions,
            })
            .collect(),
        popup_on_start: &action.popup_on_start,
        order: i32::try_from(order).unwrap_or(i32::MAX),
        timeout: i32::try_from(action.timeout.as_secs()).unwrap_or(i32::MAX),
    }
}

fn may_view(config: &Config, caller: &Caller, action: &Action) -> bool {
    decide(&config.auth, caller, action, Verb::View) == Decision::Allow
}

pub fn get_action_binding(app: &App, f: &Fields, ctx: &Ctx) -> Result<Vec<u8>, ConnectError> {
    let id = f.string("bindingId")?;
    let config = app.config();
    let action = app.engine.action(&id)?;
    if !may_view(&config, &ctx.caller, &action) {
        return Err(ConnectError::new(
            Code::PermissionDenied,
            "you do not have the view permission on this action",
        ));
    }
    Ok(to_json(&BindingReply {
        action: action_json(&config, &action, &ctx.caller),
    }))
}

pub fn get_dashboard(app: &App, f: &Fields, ctx: &Ctx) -> Result<Vec<u8>, ConnectError> {
    let title = f.string("title")?;
    let config = &*app.config();
    let caller = &ctx.caller;
    if title.is_empty() || title == "default" || title == DEFAULT_TITLE {
        let links = dashboards::default_actions(config, |a| may_view(config, caller, a))
            .into_iter()
            .map(|a| link(config, a, caller))
            .collect();
        let fieldset = ComponentJson {
            title: DEFAULT_TITLE,
            kind: "fieldset",
            contents: links,
            icon: "",
            css_class: "",
            action: None,
        };
        let dashboard = DashboardJson {
            title: DEFAULT_TITLE,
            contents: vec![fieldset],
        };
        return Ok(to_json(&DashboardReply {
            title: DEFAULT_TITLE,
            dashboard,
        }));
    }
    let found = find(&config.dashboards, &title).ok_or_else(|| {
        ConnectError::new(
            Code::NotFound,
            format!("no dashboard or directory titled {title:?}"),
        )
    })?;
    let contents = found
        .contents
        .iter()
        .filter_map(|c| render(config, c, caller))
        .collect();
    let dashboard = DashboardJson {
        title: &found.title,
        contents,
    };
    Ok(to_json(&DashboardReply {
        title: &found.title,
        dashboard,
    }))
}

/// A top-level dashboard, or a directory at any depth, by title.
fn find<'c>(components: &'c [Component], title: &str) -> Option<&'c Component> {
    if let Some(top) = components
        .iter()
        .find(|c| c.title == title && !dashboards::is_link(c))
    {
        return Some(top);
    }
    fn nested<'c>(components: &'c [Component], title: &str) -> Option<&'c Component> {
        components.iter().find_map(|c| {
            if c.title == title && dashboards::is_directory(c) {
                Some(c)
            } else {
                nested(&c.contents, title)
            }
        })
    }
    components.iter().find_map(|c| nested(&c.contents, title))
}

fn link<'a>(config: &'a Config, action: &'a Action, caller: &Caller) -> ComponentJson<'a> {
    ComponentJson {
        title: &action.title,
        kind: "link",
        contents: Vec::new(),
        icon: &action.icon,
        css_class: "",
        action: Some(action_json(config, action, caller)),
    }
}

/// A configured component as the caller sees it; `None` when nothing of it is visible.
fn render<'a>(config: &'a Config, c: &'a Component, caller: &Caller) -> Option<ComponentJson<'a>> {
    // An entity fieldset repeats per entity instance; until entity files are loaded there
    // are no instances, so there is nothing to show.
    if c.entity.is_some() {
        return None;
    }
    if dashboards::is_link(c) {
        let action = config
            .actions
            .iter()
            .find(|a| a.title == c.title && a.entity.is_none())?;
        if !may_view(config, caller, action) {
            return None;
        }
        let mut l = link(config, action, caller);
        if !c.icon.is_empty() {
            l.icon = &c.icon;
        }
        l.css_class = &c.css_class;
        return Some(l);
    }
    let contents: Vec<ComponentJson<'a>> = c
        .contents
        .iter()
        .filter_map(|x| render(config, x, caller))
        .collect();
    let kind = if dashboards::is_directory(c) {
        "directory"
    } else if c.kind.is_empty() {
        "fieldset"
    } else {
        c.kind.as_str()
    };
    // A fieldset or directory with nothing the caller may see is left out; display
    // components carry their text in the title and have no contents.
    if matches!(kind, "fieldset" | "directory") && contents.is_empty() {
        return None;
    }
    Some(ComponentJson {
        title: &c.title,
        kind,
        contents,
        icon: &c.icon,
        css_class: &c.css_class,
        action: None,
    })
}
