//! What a caller can see of the configured actions and entities: GetDashboard (the default
//! dashboard and the configured ones, nested directories included, entity fieldsets repeated
//! once per instance, with their titles and classes rendered for it), GetActionBinding (the
//! `Action` message, `canExec` decided per caller), GetEntities and GetEntity (an instance
//! shows to a caller who may view one of its bindings), and ValidateArgumentType, which checks
//! a value against a declared argument the caller may view. Only what the caller may view is
//! shown.
//!
//! An action disabled by an error in the config is shown greyed: its `canExec` is false for
//! everyone, and its link carries the class `disabled` and, as its one content, a `display`
//! component with the errors. The messages have no field for a reason, and a link's
//! `contents` is otherwise empty, so a client that knows nothing of this still shows a button
//! it cannot press, and actiond's page shows the reason under it.

use std::borrow::Cow;
use std::collections::HashSet;

use bytes::Bytes;

use super::dto::Out;
use super::dto::{
    ActionJson, ArgumentJson, BindingReply, ChoiceJson, ComponentJson, DashboardJson,
    DashboardReply, EntitiesReply, EntityDefinitionJson, EntityJson, ValidateReply,
};
use super::rendered::{self, Key};
use super::{App, Ctx, login_gate};
use crate::arguments;
use crate::config::{Action, Component, ComponentKind, Config};
use crate::dashboards::{self, DEFAULT_TITLE};
use crate::engine::{Binding, Setup, escape_html, render_for, render_html_for};
use crate::entities::{self, Instance};
use crate::permissions::{Caller, Decision, Verb, decide};
use crate::protocol::{Code, ConnectError, Fields};

/// The `Action` message of `action` for `caller`.
pub fn action_json<'a>(setup: &'a Setup, action: &'a Action, caller: &Caller) -> ActionJson<'a> {
    let config = &setup.config;
    // The configured action's position, also for each binding of an entity action.
    let order = setup.binding(&action.id).map_or(0, |b| b.order);
    ActionJson {
        binding_id: &action.id,
        title: &action.title,
        icon: &action.icon,
        can_exec: action.disabled.is_none()
            && decide(&config.auth, caller, action, Verb::Exec) == Decision::Allow,
        arguments: action
            .arguments
            .iter()
            // Filled in by a file trigger only: a form field for them would invite a value
            // the start refuses.
            .filter(|a| !a.from_trigger)
            .map(|a| ArgumentJson {
                name: &a.name,
                title: &a.title,
                kind: a.rule.name(),
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
        popup_on_start: action.popup_on_start.as_str(),
        order: i32::try_from(order).unwrap_or(i32::MAX),
        timeout: i32::try_from(action.timeout.as_secs()).unwrap_or(i32::MAX),
    }
}

/// Whether `caller` sees `action`: the view permission, and for a disabled action whether it
/// is shown at all (not when its own access rules are broken).
fn may_view(config: &Config, caller: &Caller, action: &Action) -> bool {
    action.disabled.as_ref().is_none_or(|d| d.shown)
        && decide(&config.auth, caller, action, Verb::View) == Decision::Allow
}

/// The class a link of a disabled action carries, added to any the dashboard gives it.
const DISABLED_CLASS: &str = "disabled";

/// The action bound to `id`, if `caller` may view it.
fn viewable<'s>(setup: &'s Setup, id: &str, caller: &Caller) -> Result<&'s Action, ConnectError> {
    let action = setup
        .action(id)
        .ok_or_else(|| ConnectError::new(Code::NotFound, format!("no action with id {id:?}")))?;
    if !may_view(&setup.config, caller, action) {
        return Err(ConnectError::new(
            Code::PermissionDenied,
            "you do not have the view permission on this action",
        ));
    }
    Ok(action)
}

pub fn get_action_binding(app: &App, f: &Fields, ctx: &Ctx) -> Result<Vec<u8>, ConnectError> {
    let id = f.string("bindingId")?;
    let setup = app.engine.setup();
    let action = viewable(&setup, &id, &ctx.caller)?;
    Ok(ctx.out.encode(&BindingReply {
        action: action_json(&setup, action, &ctx.caller),
    }))
}

/// ValidateArgumentType. With `bindingId`, `value` is checked as a start would check it for
/// the argument `argumentName` of that action: its choices, its type (`regex:` included, with
/// the pattern compiled at load) and whether it may be empty. That needs what GetActionBinding
/// needs: the login gate passed and the view permission. Without `bindingId`, `value` is
/// checked against the built-in type named by `type`, for anyone; a `regex:` type sent this
/// way is answered with how to ask instead, and never compiled.
pub fn validate_argument(app: &App, f: &Fields, ctx: &Ctx) -> Result<Vec<u8>, ConnectError> {
    let value = f.string("value")?;
    let id = f.string("bindingId")?;
    let (valid, description) = if id.is_empty() {
        arguments::validate_type(&f.string("type")?, &value)
    } else {
        login_gate(app, &ctx.caller)?;
        let setup = app.engine.setup();
        let action = viewable(&setup, &id, &ctx.caller)?;
        let name = f.string("argumentName")?;
        let declared = action
            .arguments
            .iter()
            .find(|a| a.name == name && !a.rule.is_display_only() && !a.from_trigger)
            .ok_or_else(|| {
                ConnectError::new(
                    Code::NotFound,
                    format!("action {id:?} has no argument {name:?} that takes a value"),
                )
            })?;
        match arguments::settle(declared, &value) {
            Ok(_) => (true, String::new()),
            Err(why) => (false, why.to_string()),
        }
    };
    Ok(ctx.out.encode(&ValidateReply {
        valid,
        description: &description,
    }))
}

/// GetDashboard: the kept answer for this setup, title, codec and the caller's rights, or one
/// rendered off the event loop (`rendered`).
pub async fn get_dashboard(app: &App, f: &Fields, ctx: &Ctx) -> Result<Bytes, ConnectError> {
    let title = f.string("title")?;
    let setup = app.engine.setup();
    let key = Key::new(&setup.config.auth, &ctx.caller, &title, ctx.out.codec());
    let (caller, out) = (ctx.caller.clone(), ctx.out);
    app.dashboards
        .answer(&setup, key, move |setup| {
            render_dashboard(setup, &caller, &title, out)
        })
        .await
}

/// The dashboard titled `title` as `caller` sees it, in `out`'s codec, within the answer's
/// size bound.
fn render_dashboard(
    setup: &Setup,
    caller: &Caller,
    title: &str,
    out: Out,
) -> Result<Vec<u8>, ConnectError> {
    let view = View { setup, caller };
    let config = &*setup.config;
    if title.is_empty() || title == "default" || title == DEFAULT_TITLE {
        let links =
            dashboards::default_bindings(config, setup.bindings(), |a| may_view(config, caller, a))
                .into_iter()
                .map(|b| view.link(&b.action, Cow::Borrowed("")))
                .collect();
        let fieldset = ComponentJson {
            title: Cow::Borrowed(DEFAULT_TITLE),
            kind: "fieldset",
            contents: links,
            icon: "",
            css_class: Cow::Borrowed(""),
            action: None,
        };
        let mut contents = vec![fieldset];
        rendered::bound(&mut contents);
        let dashboard = DashboardJson {
            title: DEFAULT_TITLE,
            contents,
        };
        return rendered::checked(out.encode(&DashboardReply {
            title: DEFAULT_TITLE,
            dashboard,
        }));
    }
    let found = find(&config.dashboards, title).ok_or_else(|| {
        ConnectError::new(
            Code::NotFound,
            format!("no dashboard or directory titled {title:?}"),
        )
    })?;
    let mut contents: Vec<ComponentJson> = found
        .contents
        .iter()
        .flat_map(|c| view.render(c, None))
        .collect();
    rendered::bound(&mut contents);
    let dashboard = DashboardJson {
        title: &found.title,
        contents,
    };
    rendered::checked(out.encode(&DashboardReply {
        title: &found.title,
        dashboard,
    }))
}

/// Which entity instances a caller may view: those with a binding the caller may view. An
/// instance no action binds is judged as a run whose binding is gone is judged: against an
/// action no ACL names, so `defaultPermissions` and the ACLs added to every action decide.
struct Visible<'a> {
    seen: HashSet<(&'a str, &'a str)>,
    bound: HashSet<(&'a str, &'a str)>,
    unbound: bool,
}

impl<'a> Visible<'a> {
    fn of(setup: &'a Setup, caller: &Caller) -> Visible<'a> {
        let mut seen = HashSet::new();
        let mut bound = HashSet::new();
        for b in setup.bindings() {
            let (Some(kind), Some(i)) = (b.action.entity.as_deref(), &b.instance) else {
                continue;
            };
            let pair = (kind, i.key.as_str());
            bound.insert(pair);
            if may_view(&setup.config, caller, &b.action) {
                seen.insert(pair);
            }
        }
        Visible {
            seen,
            bound,
            unbound: may_view(&setup.config, caller, setup.action_for_run("")),
        }
    }

    fn may_view(&self, kind: &str, key: &str) -> bool {
        self.seen.contains(&(kind, key)) || (self.unbound && !self.bound.contains(&(kind, key)))
    }
}

/// GetEntities: every type, with the instances the caller may view.
pub fn get_entities(app: &App, ctx: &Ctx) -> Vec<u8> {
    let setup = app.engine.setup();
    let visible = Visible::of(&setup, &ctx.caller);
    let definitions = setup
        .entities
        .types()
        .map(|t| EntityDefinitionJson {
            title: t,
            instances: setup
                .entities
                .instances(t)
                .iter()
                .filter(|i| visible.may_view(t, &i.key))
                .map(|i| EntityJson {
                    title: &i.title,
                    unique_key: &i.key,
                    kind: t,
                })
                .collect(),
            used_on_dashboards: dashboards::dashboards_using(&setup.config, t),
        })
        .collect();
    ctx.out.encode(&EntitiesReply {
        entity_definitions: definitions,
    })
}

pub fn get_entity(app: &App, f: &Fields, ctx: &Ctx) -> Result<Vec<u8>, ConnectError> {
    let (key, kind) = (f.string("uniqueKey")?, f.string("type")?);
    let setup = app.engine.setup();
    let instance = setup.entities.get(&kind, &key).ok_or_else(|| {
        ConnectError::new(
            Code::NotFound,
            format!("no {kind:?} entity with key {key:?}"),
        )
    })?;
    if !Visible::of(&setup, &ctx.caller).may_view(&kind, &key) {
        return Err(ConnectError::new(
            Code::PermissionDenied,
            "you do not have the view permission on any action of this entity",
        ));
    }
    Ok(ctx.out.encode(&EntityJson {
        title: &instance.title,
        unique_key: &instance.key,
        kind: &kind,
    }))
}

/// A top-level dashboard, or a directory at any depth, by title.
fn find<'c>(components: &'c [Component], title: &str) -> Option<&'c Component> {
    if let Some(top) = components.iter().find(|c| c.title == title && !c.is_link()) {
        return Some(top);
    }
    fn nested<'c>(components: &'c [Component], title: &str) -> Option<&'c Component> {
        components.iter().find_map(|c| {
            if c.title == title && c.kind == ComponentKind::Directory {
                Some(c)
            } else {
                nested(&c.contents, title)
            }
        })
    }
    components.iter().find_map(|c| nested(&c.contents, title))
}

/// Renders dashboard components for one caller.
struct View<'a> {
    setup: &'a Setup,
    caller: &'a Caller,
}

impl<'a> View<'a> {
    /// A link to `action`, with `css_class` (the dashboard's, rendered); a disabled action's
    /// link is marked and carries its errors (see the module's note).
    fn link(&self, action: &'a Action, css_class: Cow<'a, str>) -> ComponentJson<'a> {
        let (css_class, contents) = match &action.disabled {
            None => (css_class, Vec::new()),
            Some(disabled) => {
                let class = if css_class.trim().is_empty() {
                    Cow::Borrowed(DISABLED_CLASS)
                } else {
                    Cow::Owned(format!("{} {DISABLED_CLASS}", css_class.trim()))
                };
                let reason = ComponentJson {
                    title: Cow::Owned(escape_html(&format!(
                        "Disabled by an error in the config: {}",
                        disabled.reason()
                    ))),
                    kind: ComponentKind::Display.as_str(),
                    contents: Vec::new(),
                    icon: "",
                    css_class: Cow::Borrowed(DISABLED_CLASS),
                    action: None,
                };
                (class, vec![reason])
            }
        };
        ComponentJson {
            title: Cow::Borrowed(&action.title),
            kind: "link",
            contents,
            icon: &action.icon,
            css_class,
            action: Some(action_json(self.setup, action, self.caller)),
        }
    }

    /// The binding a link or a latest-output component names, of the same entity instance
    /// when inside one. A link names its action by the configured title; a latest-output
    /// component by the action's id (the form OliveTin documents, `title: <action id>`) or,
    /// failing that, by its title.
    fn named_binding(
        &self,
        c: &Component,
        instance: Option<(&str, &Instance)>,
    ) -> Option<&'a Binding> {
        let setup: &'a Setup = self.setup;
        if c.kind == ComponentKind::StdoutMostRecentExecution {
            let id = match instance {
                Some((_, i)) => entities::binding_id(&c.title, &i.key),
                None => c.title.clone(),
            };
            let by_id = setup
                .binding(&id)
                .filter(|b| b.instance.is_some() == instance.is_some());
            if by_id.is_some() {
                return by_id;
            }
        }
        let titled = |b: &&Binding| b.template_title == c.title;
        let same_instance =
            setup
                .bindings()
                .iter()
                .filter(titled)
                .find(|b| match (instance, &b.instance) {
                    (Some((kind, i)), Some(bi)) => {
                        bi.key == i.key && b.action.entity.as_deref() == Some(kind)
                    }
                    (None, None) => true,
                    _ => false,
                });
        // Inside an entity fieldset, an action without an entity is the same button in every
        // instance's fieldset (as in OliveTin 3).
        same_instance.or_else(|| {
            instance?;
            setup
                .bindings()
                .iter()
                .filter(titled)
                .find(|b| b.instance.is_none())
        })
    }

    /// A configured component as the caller sees it, within an entity instance or not: an
    /// entity fieldset becomes one fieldset per instance; what the caller may not view, and
    /// containers left empty, disappear.
    fn render(
        &self,
        c: &'a Component,
        instance: Option<(&'a str, &'a Instance)>,
    ) -> Vec<ComponentJson<'a>> {
        if let (Some(kind), None) = (&c.entity, instance) {
            return self
                .setup
                .entities
                .instances(kind)
                .iter()
                .flat_map(|i| self.render(c, Some((kind.as_str(), i))))
                .collect();
        }
        let title: Cow<'a, str> = match instance {
            // Display components are HTML written in the config; their entity values are
            // escaped. Other titles are plain text, escaped by whoever shows them.
            Some((_, i)) if c.kind == ComponentKind::Display => {
                Cow::Owned(render_html_for(&c.title, i))
            }
            Some((_, i)) => Cow::Owned(render_for(&c.title, i)),
            None => Cow::Borrowed(&c.title),
        };
        // A class is a plain word for the page (which keeps letters, digits, `-` and `_`).
        let css_class: Cow<'a, str> = match instance {
            Some((_, i)) => Cow::Owned(render_for(&c.css_class, i)),
            None => Cow::Borrowed(&c.css_class),
        };
        let recent = c.kind == ComponentKind::StdoutMostRecentExecution;
        if c.is_link() || recent {
            let Some(binding) = self.named_binding(c, instance) else {
                return Vec::new();
            };
            if !may_view(&self.setup.config, self.caller, &binding.action) {
                return Vec::new();
            }
            let mut l = self.link(&binding.action, css_class);
            if recent {
                l.kind = ComponentKind::StdoutMostRecentExecution.as_str();
                l.title = title;
            }
            if !c.icon.is_empty() {
                l.icon = &c.icon;
            }
            return vec![l];
        }
        let contents: Vec<ComponentJson<'a>> = c
            .contents
            .iter()
            .flat_map(|x| self.render(x, instance))
            .collect();
        let kind = c.kind.as_str();
        // A fieldset or directory with nothing the caller may see is left out; display
        // components carry their text in the title and have no contents.
        if matches!(kind, "fieldset" | "directory") && contents.is_empty() {
            return Vec::new();
        }
        vec![ComponentJson {
            title,
            kind,
            contents,
            icon: &c.icon,
            css_class,
            action: None,
        }]
    }
}
