//! Whether a `regex:` pattern may let a value start with `-` (fe30v F14: the pattern
//! `[A-Za-z0-9._-]{1,255}` admits `-delete`, which `find` reads as an option). A conservative
//! reading of the pattern's first character: the branches of a top-level alternation each,
//! anchors and empty-able parts skipped, a class, a literal or an escape judged by whether it
//! holds `-`. Whatever it cannot read (`.`, `\x2d`, `\pP`, a nested class, set operations,
//! `(?x)`) counts as "may": the answer "cannot" is a proof, "may" is not. The pattern is
//! matched whole (`pattern` anchors it), so its start is the value's start with or without a
//! `^`. Pure: it reads the pattern's text, which `pattern` has compiled already, and never a
//! value; it decides nothing about where a value stands (`config::command` does).

/// Whether a value matching the whole of `source` may start with `-`.
pub fn may_start_with_dash(source: &str) -> bool {
    let chars: Vec<char> = source.chars().collect();
    let mut r = Reader {
        p: &chars,
        at: 0,
        lost: false,
    };
    let first = r.alternation();
    // A construct not followed, or text left over (an unbalanced `)`), is no pattern this
    // reading can vouch for, wherever it stands.
    first.dash || r.lost || r.at != chars.len()
}

/// The pattern's characters, where the reading is, and whether it met a construct it does
/// not follow (then "may", wherever that stands: what follows was not read right).
struct Reader<'a> {
    p: &'a [char],
    at: usize,
    lost: bool,
}

/// What a part of a pattern may start with: whether `-`, and whether it may match nothing
/// (so that what follows it may start the value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct First {
    dash: bool,
    empty: bool,
}

const MAY: First = First {
    dash: true,
    empty: false,
};
const NOTHING: First = First {
    dash: false,
    empty: true,
};
const NO_DASH: First = First {
    dash: false,
    empty: false,
};

impl Reader<'_> {
    /// Marks the reading lost: "may".
    fn lose(&mut self) -> First {
        self.lost = true;
        MAY
    }

    /// Branches separated by `|` up to a `)` or the end; `at` is left on the `)`.
    fn alternation(&mut self) -> First {
        let mut out = First {
            dash: false,
            empty: false,
        };
        loop {
            let branch = self.sequence();
            out.dash |= branch.dash;
            out.empty |= branch.empty;
            if self.p.get(self.at) == Some(&'|') {
                self.at += 1;
            } else {
                return out;
            }
        }
    }

    /// One branch: its atoms in order until one that cannot be empty.
    fn sequence(&mut self) -> First {
        let mut dash = false;
        let mut empty = true;
        while let Some(&c) = self.p.get(self.at) {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom();
            let optional = self.quantifier();
            // Read on to the branch's end either way, so the caller goes on past it.
            if empty {
                dash |= atom.dash;
                empty = atom.empty || optional;
            }
        }
        First { dash, empty }
    }

    /// Reads a quantifier after an atom, if any; whether it lets the atom match nothing.
    fn quantifier(&mut self) -> bool {
        let optional = match self.p.get(self.at) {
            Some('?' | '*') => {
                self.at += 1;
                true
            }
            Some('+') => {
                self.at += 1;
                false
            }
            Some('{') => {
                let Some(len) = self.p[self.at..].iter().position(|&c| c == '}') else {
                    return false;
                };
                let inside: String = self.p[self.at + 1..self.at + len].iter().collect();
                let low = inside.split(',').next().unwrap_or("").trim();
                // `{x` that is no repetition is a literal to some engines: regex-lite refuses it,
                // so a compiled pattern's `{` here is a repetition.
                self.at += len + 1;
                low.is_empty() || low.parse::<u32>().is_ok_and(|n| n == 0)
            }
            _ => return false,
        };
        // A lazy or possessive mark changes nothing of what may match.
        if matches!(self.p.get(self.at), Some('?' | '+')) {
            self.at += 1;
        }
        optional
    }

    /// One atom at `at`, which it reads past.
    fn atom(&mut self) -> First {
        let c = self.p[self.at];
        self.at += 1;
        match c {
            '^' | '$' => NOTHING,
            '.' => MAY,
            '[' => self.class(),
            '\\' => self.escape(),
            '(' => self.group(),
            '-' => MAY,
            // `*`, `+`, `?` without an atom are refused by the compiler: not reached.
            _ => NO_DASH,
        }
    }

    /// An escape after its `\`.
    fn escape(&mut self) -> First {
        let Some(&c) = self.p.get(self.at) else {
            return self.lose();
        };
        self.at += 1;
        match c {
            // Anchors and word boundaries match no character.
            'A' | 'z' | 'b' | 'B' | '<' | '>' => NOTHING,
            'd' | 'w' | 's' | 'n' | 't' | 'r' | 'f' | 'v' | 'a' | 'e' => NO_DASH,
            // A code point, a Unicode class or a negated class: not followed.
            'x' | 'u' | 'U' | 'p' | 'P' | 'D' | 'W' | 'S' => self.lose(),
            '-' => MAY,
            c if c.is_ascii_punctuation() => NO_DASH,
            _ => self.lose(),
        }
    }

    /// A group after its `(`: flags, a name, then an alternation up to its `)`.
    fn group(&mut self) -> First {
        if self.p.get(self.at) == Some(&'?') {
            let flags: String = self.p[self.at + 1..]
                .iter()
                .take_while(|&&c| c != ')' && c != ':')
                .collect();
            // `(?x)` reads blanks and `#` differently: not followed.
            if flags.contains('x') {
                return self.lose();
            }
            if flags.starts_with('P') || flags.starts_with('<') {
                // `(?P<name>…)`, `(?<name>…)`.
                match self.p[self.at..].iter().position(|&c| c == '>') {
                    Some(k) => self.at += k + 1,
                    None => return self.lose(),
                }
            } else {
                self.at += 1 + flags.chars().count();
                match self.p.get(self.at) {
                    // `(?i)`: flags for the rest, no character.
                    Some(')') => {
                        self.at += 1;
                        return NOTHING;
                    }
                    Some(':') => self.at += 1,
                    _ => return self.lose(),
                }
            }
        }
        let inner = self.alternation();
        if self.p.get(self.at) != Some(&')') {
            return self.lose();
        }
        self.at += 1;
        inner
    }

    /// A class after its `[`: whether it may match `-`.
    fn class(&mut self) -> First {
        let negated = self.p.get(self.at) == Some(&'^');
        if negated {
            self.at += 1;
        }
        let mut dash = false;
        let mut first = true;
        loop {
            let Some(&c) = self.p.get(self.at) else {
                return self.lose();
            };
            self.at += 1;
            if c == ']' && !first {
                break;
            }
            first = false;
            let single = match c {
                // A nested class or a POSIX class (`[[:alpha:]]`): the POSIX ones hold no `-`
                // but `[:punct:]`, `[:graph:]`, `[:print:]`, `[:ascii:]`.
                '[' if self.p.get(self.at) == Some(&':') => {
                    let Some(k) = self.p[self.at..].iter().position(|&c| c == ']') else {
                        return self.lose();
                    };
                    let name: String = self.p[self.at..self.at + k].iter().collect();
                    self.at += k + 1;
                    if name.starts_with(":^")
                        || [":punct:", ":graph:", ":print:", ":ascii:"].contains(&name.as_str())
                    {
                        dash = true;
                    }
                    None
                }
                '[' => return self.lose(),
                // Set operations (`&&`, `--`, `~~`) are not followed.
                '&' | '~' if self.p.get(self.at) == Some(&c) => return self.lose(),
                '-' if self.p.get(self.at) == Some(&'-') => return self.lose(),
                '\\' => {
                    let Some(&e) = self.p.get(self.at) else {
                        return self.lose();
                    };
                    self.at += 1;
                    match e {
                        'd' | 'w' | 's' => None,
                        'x' | 'u' | 'U' | 'p' | 'P' | 'D' | 'W' | 'S' => return self.lose(),
                        e if e.is_ascii_punctuation() => Some(e),
                        'n' | 't' | 'r' | 'f' | 'v' | 'a' | 'e' => Some('\n'),
                        _ => return self.lose(),
                    }
                }
                c => Some(c),
            };
            let Some(low) = single else { continue };
            // A range `a-z`: a `-` between two members, not before `]`.
            if self.p.get(self.at) == Some(&'-')
                && self.p.get(self.at + 1).is_some_and(|&n| n != ']')
            {
                self.at += 1;
                let high = match self.p.get(self.at) {
                    Some('\\') => match self.p.get(self.at + 1) {
                        Some(&e) if e.is_ascii_punctuation() => {
                            self.at += 2;
                            e
                        }
                        _ => return self.lose(),
                    },
                    Some('[') => return self.lose(),
                    Some(&h) => {
                        self.at += 1;
                        h
                    }
                    None => return self.lose(),
                };
                dash |= low <= '-' && '-' <= high;
            } else {
                dash |= low == '-';
            }
        }
        First {
            dash: dash != negated,
            empty: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::may_start_with_dash;

    #[test]
    fn a_pattern_may_let_a_value_start_with_a_dash() {
        // (pattern, may a matching value start with `-`)
        let table: &[(&str, bool)] = &[
            // fe30v F14: the documented example admits `-delete`.
            (r"^[A-Za-z0-9._-]{1,255}$", true),
            (r"[A-Za-z0-9._-]{1,255}", true),
            (r"^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$", false),
            (r"[a-z0-9]+", false),
            (r"^[-a-z]+$", true),
            (r"^[a-z-]+$", true),
            (r"^[a\-z]+$", true),
            (r"^[!-/]x$", true),
            (r"^[+-.]x$", true),
            (r"^[0-9]+$", false),
            (r"^\d{4}-\d{2}-\d{2}$", false),
            (r"^-?\d+$", true),
            (r"^\d*-x$", true),
            (r"^(foo|bar)$", false),
            (r"^(foo|-bar)$", true),
            (r"foo|bar", false),
            (r"foo|-bar", true),
            (r"^(?:a|b)?c$", false),
            (r"^(?:a|b)?-c$", true),
            (r"(?i)^[a-z]+$", false),
            (r"(?x) [a-z]+", true),
            (r"^.+$", true),
            (r"^\w+$", false),
            (r"^\W+$", true),
            (r"^\S+$", true),
            (r"^\x2d$", true),
            (r"^\pL+$", true),
            (r"^[^a-z]+$", true),
            (r"^[^-]+$", false),
            (r"^[^-a]+$", false),
            (r"^[[:alpha:]]+$", false),
            (r"^[[:punct:]]+$", true),
            (r"^[a-z&&[^x]]+$", true),
            (r"^(?P<n>[a-z]+)$", false),
            (r"^(?<n>-[a-z]+)$", true),
            (r"^\-x$", true),
            (r"^\.x$", false),
            (r"^$", false),
            (r"^a*$", false),
            (r"^(a|)-$", true),
            (r"^(a|b)+-$", false),
            (r"^[a-z]{0,3}-$", true),
            (r"^[a-z]{,3}-$", true),
            (r"^[a-z]{1,3}-$", false),
            (r"^on|off$", false),
            (r"^\bx$", false),
            (r"^[]a]x$", false),
            (r"^[]-]x$", true),
            // A group after the first character: read past, not judged (the corpus's tags).
            (r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$", false),
            (r"^(?:[._-]x)?[a-z]$", true),
            (r"^([a-z]-)+(x|-y)$", false),
        ];
        for &(pattern, may) in table {
            assert_eq!(may_start_with_dash(pattern), may, "{pattern}");
        }
    }

    /// Every pattern the reading calls safe really refuses a value starting with `-`, on a
    /// few probes (a check of the proof, not of the "may").
    #[test]
    fn a_pattern_called_safe_matches_no_value_starting_with_a_dash() {
        let safe = [
            r"^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$",
            r"^\d{4}-\d{2}-\d{2}$",
            r"^(?:a|b)?c$",
            r"^[^-]+$",
            r"^(a|b)+-$",
        ];
        for source in safe {
            assert!(!may_start_with_dash(source), "{source}");
            let p = super::super::pattern::Pattern::new(source).expect(source);
            for probe in ["-", "-x", "-delete", "--help", "-1", "-a-", "-c"] {
                assert!(!p.is_match(probe), "{source} matches {probe}");
            }
        }
    }
}
