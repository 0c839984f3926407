//! GetDashboard's answers, rendered once and shared: kept per setup (a reload makes a new
//! one), dashboard title, codec and the caller's rights (whether it is the guest, and which
//! ACLs match it: all that `permissions::decide` looks at besides the setup), so a repeated
//! request costs a clone of shared bytes, and unread answers held by many connections are one
//! buffer. A miss is rendered off the event loop, one at a time. Also the size bound of an
//! answer: a dashboard larger than `MAX_DASHBOARD_BYTES` is cut, with a `display` component
//! at its end saying how much was left out. It must not decide permissions (the key holds
//! what decides them) nor render anything itself: `catalog` hands it the rendering.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::dto::ComponentJson;
use crate::config::Auth;
use crate::engine::Setup;
use crate::permissions::{Caller, matched_acls};
use crate::protocol::{Code, Codec, ConnectError};

/// The largest GetDashboard answer: an entity fieldset over thousands of instances would
/// otherwise make megabytes per request (1000 instances made 4.36 MB).
pub const MAX_DASHBOARD_BYTES: usize = 1024 * 1024;
/// Room kept under the bound for the answer's own fields and the marker.
const MARGIN: usize = 4096;
/// At most this many answers, and bytes of them, are kept; past either the cache starts over.
const MAX_ENTRIES: usize = 64;
const MAX_CACHED_BYTES: usize = 8 * 1024 * 1024;

/// What an answer depends on besides the setup.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    title: String,
    codec: Codec,
    guest: bool,
    /// The names of the ACLs that match the caller, in config order.
    acls: Vec<String>,
}

impl Key {
    pub fn new(auth: &Auth, caller: &Caller, title: &str, codec: Codec) -> Key {
        Key {
            title: title.to_string(),
            codec,
            guest: caller.is_guest(),
            acls: matched_acls(auth, caller)
                .into_iter()
                .map(str::to_string)
                .collect(),
        }
    }
}

#[derive(Default)]
struct Cache {
    /// The setup the answers were rendered from; held, so that its address is never reused
    /// while the answers are kept.
    setup: Option<Arc<Setup>>,
    answers: HashMap<Key, Bytes>,
    bytes: usize,
}

/// The rendered answers.
#[derive(Default)]
pub struct Dashboards {
    cache: Mutex<Cache>,
    /// One rendering at a time: many requests missing together wait for the first, then
    /// find its answer.
    rendering: tokio::sync::Mutex<()>,
}

impl Dashboards {
    fn get(&self, setup: &Arc<Setup>, key: &Key) -> Option<Bytes> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let same = cache.setup.as_ref().is_some_and(|s| Arc::ptr_eq(s, setup));
        same.then(|| cache.answers.get(key).cloned()).flatten()
    }

    fn put(&self, setup: &Arc<Setup>, key: Key, body: Bytes) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let same = cache.setup.as_ref().is_some_and(|s| Arc::ptr_eq(s, setup));
        if !same
            || cache.answers.len() >= MAX_ENTRIES
            || cache.bytes + body.len() > MAX_CACHED_BYTES
        {
            *cache = Cache {
                setup: Some(Arc::clone(setup)),
                ..Cache::default()
            };
        }
        cache.bytes += body.len();
        cache.answers.insert(key, body);
    }

    /// The answer for `key` under `setup`: kept, or made by `render` off the event loop (an
    /// error is answered, never kept).
    pub async fn answer(
        &self,
        setup: &Arc<Setup>,
        key: Key,
        render: impl FnOnce(&Setup) -> Result<Vec<u8>, ConnectError> + Send + 'static,
    ) -> Result<Bytes, ConnectError> {
        if let Some(body) = self.get(setup, &key) {
            return Ok(body);
        }
        let _one = self.rendering.lock().await;
        if let Some(body) = self.get(setup, &key) {
            return Ok(body);
        }
        let shared = Arc::clone(setup);
        let body = tokio::task::spawn_blocking(move || render(&shared))
            .await
            .map_err(|e| ConnectError::new(Code::Internal, format!("rendering failed: {e}")))??;
        let body = Bytes::from(body);
        self.put(setup, key, body.clone());
        Ok(body)
    }
}

/// The bytes `value` takes as JSON: at least what it takes in binary protobuf.
fn json_len<T: serde::Serialize>(value: &T) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |v| v.len())
}

/// How many components `c` is, with everything in it.
fn count(c: &ComponentJson) -> usize {
    1 + c.contents.iter().map(count).sum::<usize>()
}

/// Cuts `contents` to what fits in `budget` bytes: the components in order, and of the first
/// one that does not fit whole, what fits of its own contents (a fieldset of many links keeps
/// its first ones). Returns how many components were left out.
fn cut(contents: &mut Vec<ComponentJson>, budget: usize) -> usize {
    let mut used = 0;
    for i in 0..contents.len() {
        let size = json_len(&contents[i]).saturating_add(1);
        if used + size <= budget {
            used += size;
            continue;
        }
        let mut left: usize = contents[i + 1..].iter().map(count).sum();
        contents.truncate(i + 1);
        let c = &mut contents[i];
        let inner: usize = c.contents.iter().map(|x| json_len(x) + 1).sum();
        let shell = size.saturating_sub(inner);
        let room = budget.saturating_sub(used + shell);
        let kept_inside = !c.contents.is_empty() && room > 0 && {
            left += cut(&mut c.contents, room);
            !c.contents.is_empty()
        };
        if !kept_inside {
            left += count(&contents[i]);
            contents.truncate(i);
        }
        return left;
    }
    0
}

/// Bounds a dashboard's contents to `MAX_DASHBOARD_BYTES`: what does not fit is left out and
/// a `display` component at the end says how many components that was. Nothing changes for a
/// dashboard that fits.
pub fn bound(contents: &mut Vec<ComponentJson>) {
    bound_to(contents, MAX_DASHBOARD_BYTES);
}

fn bound_to(contents: &mut Vec<ComponentJson>, max: usize) {
    let whole: usize = contents.iter().map(|c| json_len(c) + 1).sum();
    if whole + MARGIN <= max {
        return;
    }
    let left = cut(contents, max.saturating_sub(MARGIN));
    contents.push(ComponentJson {
        title: format!(
            "actiond: {left} more components of this dashboard are not shown: an answer holds \
             at most {} KiB. Split it into smaller dashboards.",
            max / 1024
        )
        .into(),
        kind: "display",
        contents: Vec::new(),
        icon: "",
        css_class: "actiond-cut".into(),
        action: None,
    });
}

/// The encoded answer, refused should it still exceed the bound (it cannot: JSON sizes, which
/// the cut counts, are at least the binary ones, and the margin holds the rest).
pub fn checked(body: Vec<u8>) -> Result<Vec<u8>, ConnectError> {
    if body.len() > MAX_DASHBOARD_BYTES {
        return Err(ConnectError::new(
            Code::ResourceExhausted,
            format!(
                "the dashboard takes {} bytes, more than the {MAX_DASHBOARD_BYTES} an answer may",
                body.len()
            ),
        ));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn link(title: &str) -> ComponentJson<'static> {
        ComponentJson {
            title: Cow::Owned(title.to_string()),
            kind: "link",
            contents: Vec::new(),
            icon: "",
            css_class: Cow::Borrowed(""),
            action: None,
        }
    }

    fn fieldset(n: usize) -> ComponentJson<'static> {
        ComponentJson {
            contents: (0..n)
                .map(|i| link(&format!("link {i:04} {}", "x".repeat(80))))
                .collect(),
            kind: "fieldset",
            ..link("set")
        }
    }

    fn titles(contents: &[ComponentJson]) -> Vec<String> {
        contents.iter().map(|c| c.title.to_string()).collect()
    }

    #[test]
    fn a_dashboard_that_fits_is_kept_whole() {
        let mut contents = vec![fieldset(10), link("a")];
        bound_to(&mut contents, 64 * 1024);
        assert_eq!(titles(&contents), ["set", "a"]);
        assert_eq!(contents[0].contents.len(), 10);
    }

    #[test]
    fn a_large_one_is_cut_in_order_with_a_marker_and_fits() {
        // Many components at the top, as an entity fieldset per instance makes.
        let mut top: Vec<ComponentJson> = (0..2000).map(|_| fieldset(3)).collect();
        bound_to(&mut top, 64 * 1024);
        let kept = top.len() - 1;
        assert!(kept > 10 && kept < 2000, "{kept}");
        let marker = top.last().unwrap();
        assert_eq!(marker.kind, "display");
        let left = 2000 * 4 - top[..kept].iter().map(count).sum::<usize>();
        assert!(
            marker.title.contains(&format!("{left} more components")),
            "{}",
            marker.title
        );
        assert!(json_len(&top) <= 64 * 1024);

        // One fieldset of many links, as the default dashboard is: its first links stay.
        let mut one = vec![fieldset(5000)];
        bound_to(&mut one, 64 * 1024);
        assert_eq!(one.len(), 2);
        let links = one[0].contents.len();
        assert!(links > 10 && links < 5000, "{links}");
        assert!(one[0].contents[0].title.starts_with("link 0000"));
        assert!(
            one[1]
                .title
                .contains(&format!("{} more components", 5000 - links))
        );
        assert!(json_len(&one) <= 64 * 1024);
    }
}
