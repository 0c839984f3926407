//! Bounded capture of one output stream of one execution.
//!
//! A `Capture` keeps at most `cap` bytes: the first quarter as it arrived and a rolling tail
//! of the last three quarters, counting what fell between them. It is pure: the executor
//! feeds it the bytes it read, and anyone may render it to UTF-8 text at any time (a running
//! execution shows its output so far). Memory never exceeds the cap, however much is written.

/// Head-and-tail capture of a byte stream.
#[derive(Debug, Clone)]
pub struct Capture {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    /// A ring of the newest bytes once it is full; `tail_start` is the oldest byte's index.
    tail: Vec<u8>,
    tail_start: usize,
    total: u64,
}

impl Capture {
    /// A capture that keeps `cap` bytes: `cap / 4` from the start, the rest from the end.
    pub fn new(cap: usize) -> Self {
        let head_cap = cap / 4;
        Capture {
            head_cap,
            tail_cap: cap - head_cap,
            head: Vec::new(),
            tail: Vec::new(),
            tail_start: 0,
            total: 0,
        }
    }

    pub fn push(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        if self.head.len() < self.head_cap {
            let n = data.len().min(self.head_cap - self.head.len());
            self.head.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        if data.is_empty() || self.tail_cap == 0 {
            return;
        }
        if data.len() >= self.tail_cap {
            // The new bytes alone fill the tail: keep their end and restart the ring.
            self.tail.clear();
            self.tail
                .extend_from_slice(&data[data.len() - self.tail_cap..]);
            self.tail_start = 0;
            return;
        }
        let room = self.tail_cap - self.tail.len();
        let fill = room.min(data.len());
        self.tail.extend_from_slice(&data[..fill]);
        // Whatever did not fit overwrites the oldest bytes of the full ring.
        for &b in &data[fill..] {
            self.tail[self.tail_start] = b;
            self.tail_start = (self.tail_start + 1) % self.tail_cap;
        }
    }

    /// Every byte ever pushed, kept or not.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes that were written but are not kept.
    pub fn omitted(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    fn tail_in_order(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.tail.len());
        v.extend_from_slice(&self.tail[self.tail_start..]);
        v.extend_from_slice(&self.tail[..self.tail_start]);
        v
    }

    /// The captured text as valid UTF-8: invalid bytes become U+FFFD, and when bytes were
    /// omitted an `actiond:` marker line stands where they were. A character cut by the
    /// omission is dropped whole rather than shown as replacement characters.
    ///
    /// A secret cut by the omission would survive redaction as two fragments (`hun` before
    /// the marker, `ter2` after it), so the end of the head that could begin a secret and the
    /// start of the tail that could end one are dropped too and counted as omitted. The
    /// caller still redacts whole secrets in the result.
    pub fn render(&self, secrets: &[String]) -> String {
        let omitted = self.omitted();
        if omitted == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&self.tail_in_order());
            return String::from_utf8_lossy(&all).into_owned();
        }
        let head = trim_partial_end(trim_secret_start(&self.head, secrets));
        let tail_bytes = self.tail_in_order();
        let tail = trim_partial_start(trim_secret_end(&tail_bytes, secrets));
        let cut = omitted
            + (self.head.len() - head.len()) as u64
            + (tail_bytes.len() - tail.len()) as u64;
        let mut out = String::from_utf8_lossy(head).into_owned();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("actiond: … {cut} bytes omitted …\n"));
        out.push_str(&String::from_utf8_lossy(tail));
        out
    }
}

/// `head` without its longest ending that is the first part of some secret.
fn trim_secret_start<'a>(head: &'a [u8], secrets: &[String]) -> &'a [u8] {
    let cut = secrets
        .iter()
        .filter_map(|s| {
            let s = s.as_bytes();
            (1..s.len()).rev().find(|&k| head.ends_with(&s[..k]))
        })
        .max()
        .unwrap_or(0);
    &head[..head.len() - cut]
}

/// `tail` without its longest beginning that is the last part of some secret.
fn trim_secret_end<'a>(tail: &'a [u8], secrets: &[String]) -> &'a [u8] {
    let cut = secrets
        .iter()
        .filter_map(|s| {
            let s = s.as_bytes();
            (1..s.len())
                .rev()
                .find(|&k| tail.starts_with(&s[s.len() - k..]))
        })
        .max()
        .unwrap_or(0);
    &tail[cut..]
}

/// Drops an incomplete UTF-8 sequence at the end of `b` (at most three bytes).
fn trim_partial_end(b: &[u8]) -> &[u8] {
    for back in 1..=3.min(b.len()) {
        let i = b.len() - back;
        let byte = b[i];
        if byte & 0xC0 == 0x80 {
            continue; // a continuation byte: look further back for the lead byte
        }
        let need = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return b, // ASCII or invalid: nothing partial to trim
        };
        return if back < need { &b[..i] } else { b };
    }
    b
}

/// Drops continuation bytes at the start of `b` (the rest of a character cut off before).
fn trim_partial_start(b: &[u8]) -> &[u8] {
    let skip = b.iter().take(3).take_while(|&&x| x & 0xC0 == 0x80).count();
    &b[skip..]
}

/// Largest `outputChunk` event text, in bytes.
pub const MAX_CHUNK: usize = 4096;

/// Cuts a live byte stream into UTF-8 text chunks of at most `MAX_CHUNK` bytes for events.
/// A character split across two reads is carried to the next read and sent whole; invalid
/// bytes become U+FFFD. Secret values are replaced, and while secrets exist the last bytes
/// that could be the start of one are held back until more arrives, so a secret split
/// across reads is still replaced.
#[derive(Debug, Default)]
pub struct Chunker {
    carry: Vec<u8>,
    secrets: Vec<String>,
}

impl Chunker {
    pub fn new(secrets: Vec<String>) -> Chunker {
        Chunker {
            carry: Vec::new(),
            secrets: secrets.into_iter().filter(|s| !s.is_empty()).collect(),
        }
    }

    /// The chunks ready after `data`.
    pub fn feed(&mut self, data: &[u8]) -> Vec<String> {
        self.carry.extend_from_slice(data);
        let complete = self.carry.len() - incomplete_tail(&self.carry);
        let partial = self.carry.split_off(complete);
        let ready = std::mem::take(&mut self.carry);
        let mut text = self.redacted(&ready);
        // Hold back what could be the beginning of a secret completed by the next read.
        let hold = self
            .secrets
            .iter()
            .map(|s| s.len().saturating_sub(1))
            .max()
            .unwrap_or(0);
        let mut keep_from = text.len().saturating_sub(hold);
        while !text.is_char_boundary(keep_from) {
            keep_from -= 1;
        }
        self.carry = text.split_off(keep_from).into_bytes();
        self.carry.extend_from_slice(&partial);
        split_at_chars(&text, MAX_CHUNK)
    }

    /// Whatever is still held, at the end of the stream.
    pub fn finish(&mut self) -> Vec<String> {
        let rest = std::mem::take(&mut self.carry);
        self.text_chunks(&rest)
    }

    fn text_chunks(&self, bytes: &[u8]) -> Vec<String> {
        split_at_chars(&self.redacted(bytes), MAX_CHUNK)
    }

    fn redacted(&self, bytes: &[u8]) -> String {
        let mut text = String::from_utf8_lossy(bytes).into_owned();
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), "********");
            }
        }
        text
    }
}

/// How many bytes at the end of `b` are the start of a character not yet complete.
fn incomplete_tail(b: &[u8]) -> usize {
    b.len() - trim_partial_end(b).len()
}

/// `text` in pieces of at most `max` bytes, each ending on a character boundary.
fn split_at_chars(text: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = rest.len().min(max);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        out.push(rest[..end].to_string());
        rest = &rest[end..];
    }
    out
}

/// Appends a service notice to a stream's text on a line of its own.
pub fn append_notice(text: &mut String, notice: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("actiond: ");
    text.push_str(notice);
    text.push('\n');
}

/// How many bytes `text` takes inside a JSON string: control characters other than the five
/// with short escapes take six (`\u0001`), quotes and backslashes two, anything else itself.
pub fn json_len(text: &str) -> usize {
    text.chars().map(json_char_len).sum()
}

fn json_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// `text` cut to its end so that it takes at most `budget` bytes in a JSON string, with an
/// `actiond:` line first saying how much was left out and where to find it; `None` when it
/// fits as it is. A list answer carries many entries, and one entry's output can take six
/// times its size once escaped: this keeps what one answer holds in memory bounded, whatever
/// the commands wrote. The end is kept because that is where a command says how it ended.
pub fn shortened_for_list(text: &str, budget: usize) -> Option<String> {
    if json_len(text) <= budget {
        return None;
    }
    let marker_room = 100;
    let mut room = budget.saturating_sub(marker_room);
    let mut start = text.len();
    for (i, c) in text.char_indices().rev() {
        let n = json_char_len(c);
        if n > room {
            break;
        }
        room -= n;
        start = i;
    }
    let mut out = format!(
        "actiond: … {} bytes left out of this list (ExecutionStatus shows them) …\n",
        start
    );
    out.push_str(&text[start..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(cap: usize, chunks: &[&[u8]]) -> Capture {
        let mut c = Capture::new(cap);
        for ch in chunks {
            c.push(ch);
        }
        c
    }

    #[test]
    fn small_output_is_kept_whole() {
        let c = capture(64, &[b"hello ", b"world\n"]);
        assert_eq!(c.render(&[]), "hello world\n");
        assert_eq!((c.total(), c.omitted()), (12, 0));
    }

    #[test]
    fn exactly_the_cap_is_kept_whole() {
        let data: Vec<u8> = (0..64u8).map(|i| b'a' + i % 26).collect();
        let c = capture(64, &[&data]);
        assert_eq!(c.render(&[]).as_bytes(), &data[..]);
    }

    #[test]
    fn overflow_keeps_first_quarter_and_last_three_quarters() {
        // Whatever the chunking, the kept bytes are the same.
        let data: Vec<u8> = (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect();
        for chunk in [1usize, 7, 16, 48, 100, 1000] {
            let mut c = Capture::new(64);
            for piece in data.chunks(chunk) {
                c.push(piece);
            }
            assert_eq!(c.omitted(), 1000 - 64, "chunk {chunk}");
            let text = c.render(&[]);
            let head = std::str::from_utf8(&data[..16]).unwrap();
            let tail = std::str::from_utf8(&data[1000 - 48..]).unwrap();
            assert_eq!(
                text,
                format!("{head}\nactiond: … 936 bytes omitted …\n{tail}"),
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn memory_stays_within_the_cap() {
        let mut c = Capture::new(4096);
        let block = [b'x'; 10_000];
        for _ in 0..1000 {
            c.push(&block);
        }
        assert!(c.head.capacity() + c.tail.capacity() <= 2 * 4096);
        assert_eq!(c.total(), 10_000_000);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let c = capture(64, &[b"\xff\xfeok"]);
        assert_eq!(c.render(&[]), "\u{FFFD}\u{FFFD}ok");
    }

    #[test]
    fn a_character_split_across_reads_stays_whole() {
        let c = capture(64, &[b"caf\xc3", b"\xa9\n"]);
        assert_eq!(c.render(&[]), "café\n");
    }

    #[test]
    fn characters_cut_by_the_omission_are_dropped_not_mangled() {
        // 'é' is two bytes; with cap 8 the head is 2 bytes and the cut falls inside characters.
        let text = "aéééééééééé";
        let c = capture(8, &[text.as_bytes()]);
        let out = c.render(&[]);
        assert!(!out.contains('\u{FFFD}'), "{out:?}");
        assert!(out.starts_with('a'));
        assert!(out.ends_with("ééé"));
    }

    #[test]
    fn a_secret_cut_by_the_omission_leaves_no_fragment() {
        // cap 16: head 4 bytes, tail 12. The secret straddles both cuts in turn.
        let cases: &[(&str, &str)] = &[
            // head ends inside the secret
            ("abhunter2..........................tail-of-it..", "ab\n"),
            // tail starts inside the secret
            ("abcd...............................nter2 rest..", "abcd\n"),
        ];
        let secrets = vec!["hunter2".to_string()];
        for (text, head) in cases {
            let c = capture(16, &[text.as_bytes()]);
            let out = c.render(&secrets);
            assert!(out.starts_with(head), "{text:?} → {out:?}");
            for frag in ["hu", "hun", "er2", "nter2", "ter2"] {
                assert!(!out.contains(frag), "{frag} left in {out:?}");
            }
            let (before, marker_and_tail) = out.split_at(out.find("actiond: … ").unwrap());
            let (marker, tail) = marker_and_tail.split_at(marker_and_tail.find('\n').unwrap() + 1);
            let cut: usize = marker["actiond: … ".len()..]
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            // `before` ends with the newline the marker line needs; the text had none there.
            assert_eq!(
                before.len() - 1 + cut + tail.len(),
                text.len(),
                "the cut count covers the dropped fragments: {out:?}"
            );
        }
        // Innocent text beside the cut is untouched when no secrets are configured.
        let c = capture(16, &[b"abhu..............................nter2 rest.."]);
        assert!(c.render(&[]).starts_with("abhu\n"));
    }

    #[test]
    fn trims_partial_sequences() {
        assert_eq!(trim_partial_end(b"ab\xe2\x82"), b"ab");
        assert_eq!(trim_partial_end(b"ab\xe2\x82\xac"), b"ab\xe2\x82\xac");
        assert_eq!(trim_partial_end(b"ab\xf0"), b"ab");
        assert_eq!(trim_partial_end(b"\xff"), b"\xff");
        assert_eq!(trim_partial_start(b"\x82\xacz"), b"z");
    }

    #[test]
    fn chunks_keep_characters_whole_and_stay_small() {
        let mut c = Chunker::new(vec![]);
        assert_eq!(c.feed(b"caf\xc3"), ["caf"]);
        assert_eq!(c.feed(b"\xa9 ok"), ["\u{e9} ok"]);
        assert!(c.feed(b"\xe2\x82").is_empty());
        assert_eq!(c.finish(), ["\u{FFFD}"]);
        let big = "é".repeat(5000);
        let chunks = Chunker::new(vec![]).feed(big.as_bytes());
        assert!(chunks.iter().all(|ch| ch.len() <= MAX_CHUNK));
        assert_eq!(chunks.concat(), big);
        assert_eq!(
            Chunker::new(vec![]).feed(b"\xff\xfeok"),
            ["\u{FFFD}\u{FFFD}ok"]
        );
    }

    #[test]
    fn a_secret_split_across_reads_is_still_hidden() {
        let mut c = Chunker::new(vec!["hunter2".into()]);
        let mut out = c.feed(b"pw=hun");
        out.extend(c.feed(b"ter2 done"));
        out.extend(c.finish());
        let text = out.concat();
        assert_eq!(text, "pw=******** done");
    }

    #[test]
    fn notices_go_on_their_own_line() {
        let mut s = String::from("partial");
        append_notice(&mut s, "timed out");
        assert_eq!(s, "partial\nactiond: timed out\n");
        let mut e = String::new();
        append_notice(&mut e, "x");
        assert_eq!(e, "actiond: x\n");
    }

    #[test]
    fn json_len_counts_escapes() {
        let cases: &[(&str, usize)] = &[
            ("", 0),
            ("abc", 3),
            ("\u{1}", 6),
            ("\u{1f}\u{7f}", 7),
            ("\n\t\r\"\\", 10),
            ("\u{8}\u{c}", 4),
            ("é日", 5),
        ];
        for &(text, len) in cases {
            assert_eq!(json_len(text), len, "{text:?}");
            // The count is serde_json's own.
            let encoded = serde_json::to_string(text).unwrap();
            assert_eq!(encoded.len() - 2, len, "{text:?}");
        }
    }

    #[test]
    fn list_output_keeps_the_end_within_the_budget_and_says_so() {
        assert_eq!(shortened_for_list("short", 100), None);
        assert_eq!(shortened_for_list(&"a".repeat(100), 100), None);
        let text = format!("{}the end\n", "\u{1}".repeat(10_000));
        let cut = shortened_for_list(&text, 1000).unwrap();
        assert!(json_len(&cut) <= 1000, "{}", json_len(&cut));
        assert!(json_len(&cut) > 900, "{}", json_len(&cut));
        assert!(cut.ends_with("the end\n"));
        let (marker, rest) = cut.split_once('\n').unwrap();
        let left_out = text.len() - (rest.len());
        assert_eq!(
            marker,
            format!(
                "actiond: … {left_out} bytes left out of this list (ExecutionStatus shows them) …"
            )
        );
        // A character is never split.
        let text = "日本".repeat(1000);
        let cut = shortened_for_list(&text, 500).unwrap();
        assert!(cut.ends_with("日本") || cut.ends_with('本'));
        assert!(json_len(&cut) <= 500);
        // A budget below the marker keeps only the marker.
        let cut = shortened_for_list(&text, 10).unwrap();
        assert!(
            cut.starts_with("actiond: …") && cut.ends_with("…\n"),
            "{cut}"
        );
    }
}
