//! The IMUnit schedule language.
//!
//! ```text
//! Schedule   ::= Ordering { "," Ordering }
//! Ordering   ::= Condition "->" BasicEvent
//! Condition  ::= Conjunct { "||" Conjunct }
//! Conjunct   ::= Atom { "&&" Atom }
//! Atom       ::= BasicEvent | BlockEvent | "(" Condition ")"
//! BasicEvent ::= EventName [ "@" ThreadName ]
//! BlockEvent ::= "[" EventName "]" [ "@" ThreadName ]
//! EventName  ::= Id { "." Id }
//! ```
//! `a -> b`: event `a` happens before `b` may happen. `[a]@t -> b`: `a`
//! happened and its thread is blocked when `b` happens. `&&` binds tighter
//! than `||`. Thread names are needed only where an event name alone is
//! ambiguous; `start@T` and `end@T` are implicit events of every thread.

use std::fmt;

/// A named event, optionally tagged with the thread it belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EventRef {
    /// The event's name (dotted identifiers).
    pub name: String,
    /// The thread, when given with `@`.
    pub thread: Option<String>,
}

/// The left-hand side of an ordering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    /// The event has happened.
    Happened(EventRef),
    /// The event has happened and its thread is blocked now.
    Blocked(EventRef),
    /// Both hold.
    And(Box<Condition>, Box<Condition>),
    /// Either holds.
    Or(Box<Condition>, Box<Condition>),
}

/// One ordering: `condition -> event`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ordering {
    /// What must hold before `event` may happen.
    pub condition: Condition,
    /// The event that waits for the condition.
    pub event: EventRef,
}

/// A schedule: orderings that must all hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// The orderings, in the order written.
    pub orderings: Vec<Ordering>,
}

/// A syntax error, with the character position where it was found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "schedule parse error at column {column}: expected {expected}, found {found}\n  {text}\n  {caret}"
)]
pub struct ParseError {
    /// 1-based column (in characters).
    pub column: usize,
    /// What the parser expected.
    pub expected: String,
    /// What it found.
    pub found: String,
    /// The schedule text.
    pub text: String,
    /// A caret under the column.
    pub caret: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    Dot,
    At,
    Arrow,
    And,
    Or,
    Comma,
    LBracket,
    RBracket,
    LParen,
    RParen,
    End,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Ident(name) => write!(f, "`{name}`"),
            Token::Dot => f.write_str("`.`"),
            Token::At => f.write_str("`@`"),
            Token::Arrow => f.write_str("`->`"),
            Token::And => f.write_str("`&&`"),
            Token::Or => f.write_str("`||`"),
            Token::Comma => f.write_str("`,`"),
            Token::LBracket => f.write_str("`[`"),
            Token::RBracket => f.write_str("`]`"),
            Token::LParen => f.write_str("`(`"),
            Token::RParen => f.write_str("`)`"),
            Token::End => f.write_str("the end of the schedule"),
        }
    }
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<(usize, Token)>,
    next: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, column: usize, expected: &str, found: String) -> ParseError {
        ParseError {
            column: column + 1,
            expected: expected.to_string(),
            found,
            text: self.text.to_string(),
            caret: format!("{}^", " ".repeat(column)),
        }
    }

    fn lex(text: &'a str) -> Result<Self, ParseError> {
        let chars: Vec<char> = text.chars().collect();
        let mut parser = Parser {
            text,
            tokens: Vec::new(),
            next: 0,
        };
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let token = match c {
                c if c.is_whitespace() => {
                    i += 1;
                    continue;
                }
                c if c.is_alphabetic() || c == '_' || c == '$' => {
                    let start = i;
                    while i < chars.len()
                        && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
                    {
                        i += 1;
                    }
                    parser
                        .tokens
                        .push((start, Token::Ident(chars[start..i].iter().collect())));
                    continue;
                }
                '.' => Token::Dot,
                '@' => Token::At,
                ',' => Token::Comma,
                '[' => Token::LBracket,
                ']' => Token::RBracket,
                '(' => Token::LParen,
                ')' => Token::RParen,
                _ if two == "->" => Token::Arrow,
                _ if two == "&&" => Token::And,
                _ if two == "||" => Token::Or,
                other => {
                    let expected = match other {
                        '-' => "`->`",
                        '&' => "`&&`",
                        '|' => "`||`",
                        _ => "an event name, `[`, `(`, `->`, `&&`, `||` or `,`",
                    };
                    return Err(parser.error(i, expected, format!("`{other}`")));
                }
            };
            let width = match token {
                Token::Arrow | Token::And | Token::Or => 2,
                _ => 1,
            };
            parser.tokens.push((i, token));
            i += width;
        }
        parser.tokens.push((chars.len(), Token::End));
        Ok(parser)
    }

    fn peek(&self) -> &Token {
        &self.tokens[self.next].1
    }

    fn bump(&mut self) -> (usize, Token) {
        let token = self.tokens[self.next].clone();
        if self.next + 1 < self.tokens.len() {
            self.next += 1;
        }
        token
    }

    fn expect(&mut self, want: Token, expected: &str) -> Result<(), ParseError> {
        let (at, token) = self.bump();
        if token == want {
            Ok(())
        } else {
            Err(self.error(at, expected, token.to_string()))
        }
    }

    fn identifier(&mut self, expected: &str) -> Result<String, ParseError> {
        match self.bump() {
            (_, Token::Ident(name)) => Ok(name),
            (at, other) => Err(self.error(at, expected, other.to_string())),
        }
    }

    fn event_name(&mut self) -> Result<String, ParseError> {
        let mut name = self.identifier("an event name")?;
        while *self.peek() == Token::Dot {
            self.bump();
            name.push('.');
            name.push_str(&self.identifier("an identifier after `.`")?);
        }
        Ok(name)
    }

    fn thread_tag(&mut self) -> Result<Option<String>, ParseError> {
        if *self.peek() == Token::At {
            self.bump();
            return Ok(Some(self.identifier("a thread name after `@`")?));
        }
        Ok(None)
    }

    fn basic_event(&mut self) -> Result<EventRef, ParseError> {
        let name = self.event_name()?;
        let thread = self.thread_tag()?;
        Ok(EventRef { name, thread })
    }

    fn atom(&mut self) -> Result<Condition, ParseError> {
        match self.peek().clone() {
            Token::LBracket => {
                self.bump();
                let name = self.event_name()?;
                self.expect(Token::RBracket, "`]`")?;
                let thread = self.thread_tag()?;
                Ok(Condition::Blocked(EventRef { name, thread }))
            }
            Token::LParen => {
                self.bump();
                let inner = self.condition()?;
                self.expect(Token::RParen, "`)`")?;
                Ok(inner)
            }
            Token::Ident(_) => Ok(Condition::Happened(self.basic_event()?)),
            _ => {
                let (at, token) = self.bump();
                Err(self.error(at, "an event name, `[` or `(`", token.to_string()))
            }
        }
    }

    fn conjunct(&mut self) -> Result<Condition, ParseError> {
        let mut left = self.atom()?;
        while *self.peek() == Token::And {
            self.bump();
            left = Condition::And(Box::new(left), Box::new(self.atom()?));
        }
        Ok(left)
    }

    fn condition(&mut self) -> Result<Condition, ParseError> {
        let mut left = self.conjunct()?;
        while *self.peek() == Token::Or {
            self.bump();
            left = Condition::Or(Box::new(left), Box::new(self.conjunct()?));
        }
        Ok(left)
    }

    fn ordering(&mut self) -> Result<Ordering, ParseError> {
        let condition = self.condition()?;
        self.expect(Token::Arrow, "`->`")?;
        let at = self.tokens[self.next].0;
        let event = self.basic_event()?;
        if event.name == "end" {
            // A thread's exit is its last act: nothing could hold it back.
            return Err(self.error(
                at,
                "an event that can wait (`end` can only come before `->`)",
                "`end`".to_string(),
            ));
        }
        Ok(Ordering { condition, event })
    }

    fn schedule(&mut self) -> Result<Schedule, ParseError> {
        let mut orderings = vec![self.ordering()?];
        loop {
            match self.bump() {
                (_, Token::Comma) => orderings.push(self.ordering()?),
                (_, Token::End) => return Ok(Schedule { orderings }),
                (at, other) => {
                    return Err(self.error(
                        at,
                        "`,` or the end of the schedule",
                        other.to_string(),
                    ));
                }
            }
        }
    }
}

impl std::str::FromStr for Schedule {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, ParseError> {
        Parser::lex(text)?.schedule()
    }
}

impl fmt::Display for EventRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(thread) = &self.thread {
            write!(f, "@{thread}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Condition::Happened(e) => write!(f, "{e}"),
            Condition::Blocked(e) => {
                write!(f, "[{}]", e.name)?;
                if let Some(thread) = &e.thread {
                    write!(f, "@{thread}")?;
                }
                Ok(())
            }
            // Both operators group to the left, and `&&` binds tighter: a
            // right operand of the same operator, and an `||` under `&&`,
            // keep their parentheses.
            Condition::And(a, b) => {
                let left = match **a {
                    Condition::Or(..) => format!("({a})"),
                    _ => a.to_string(),
                };
                let right = match **b {
                    Condition::Or(..) | Condition::And(..) => format!("({b})"),
                    _ => b.to_string(),
                };
                write!(f, "{left} && {right}")
            }
            Condition::Or(a, b) => match **b {
                Condition::Or(..) => write!(f, "{a} || ({b})"),
                _ => write!(f, "{a} || {b}"),
            },
        }
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, o) in self.orderings.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{} -> {}", o.condition, o.event)?;
        }
        Ok(())
    }
}

impl Condition {
    /// Every event the condition names.
    pub fn events(&self) -> Vec<&EventRef> {
        self.atoms().into_iter().map(|(e, _)| e).collect()
    }

    /// Every event the condition names, each with whether it is bracketed
    /// (`[e]`: its thread must be blocked).
    pub fn atoms(&self) -> Vec<(&EventRef, bool)> {
        match self {
            Condition::Happened(e) => vec![(e, false)],
            Condition::Blocked(e) => vec![(e, true)],
            Condition::And(a, b) | Condition::Or(a, b) => {
                let mut all = a.atoms();
                all.extend(b.atoms());
                all
            }
        }
    }
}

impl Schedule {
    /// Every event reference in the schedule, conditions and ordered events.
    pub fn event_refs(&self) -> impl Iterator<Item = &EventRef> {
        self.orderings
            .iter()
            .flat_map(|o| o.condition.events().into_iter().chain([&o.event]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Schedule {
        text.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    fn event(name: &str, thread: Option<&str>) -> EventRef {
        EventRef {
            name: name.into(),
            thread: thread.map(String::from),
        }
    }

    #[test]
    fn parses_the_running_example() {
        let s = parse("finishedAdd1 -> startingTake1, [startingTake2] -> startingAdd2");
        assert_eq!(s.orderings.len(), 2);
        assert_eq!(
            s.orderings[0].condition,
            Condition::Happened(event("finishedAdd1", None))
        );
        assert_eq!(s.orderings[0].event, event("startingTake1", None));
        assert_eq!(
            s.orderings[1].condition,
            Condition::Blocked(event("startingTake2", None))
        );
        assert_eq!(s.orderings[1].event, event("startingAdd2", None));
    }

    #[test]
    fn parses_threads_dots_and_precedence() {
        let s = parse("(a@t1 || [b.c]@t2) && d -> e@main, x || y && end@w -> start@worker");
        let first = &s.orderings[0];
        assert_eq!(first.event, event("e", Some("main")));
        let Condition::And(left, right) = &first.condition else {
            panic!("&& at the top: {first:?}")
        };
        assert!(matches!(**left, Condition::Or(..)));
        assert_eq!(**right, Condition::Happened(event("d", None)));
        assert_eq!(
            left.events(),
            vec![&event("a", Some("t1")), &event("b.c", Some("t2"))]
        );
        // `&&` binds tighter than `||`.
        let Condition::Or(_, and) = &s.orderings[1].condition else {
            panic!("|| at the top")
        };
        assert!(matches!(**and, Condition::And(..)));
    }

    #[test]
    fn prints_what_it_parses() {
        for text in [
            "a -> b",
            "[a]@t -> b@main",
            "(a || b) && c -> d, e.f -> g",
            "a || b && c -> d",
            "a && (b && c) && d -> e",
            "a || (b || c) -> d",
            "s&&s&&V&&s&&(s&&r&&L&&s&&L&&L&&pL)&&L->t",
        ] {
            let s = parse(text);
            assert_eq!(parse(&s.to_string()), s, "{text}");
        }
    }

    #[test]
    fn errors_say_where_and_what() {
        let e = "[beforeget] - beforeput@putThread"
            .parse::<Schedule>()
            .unwrap_err();
        assert_eq!(e.column, 13);
        assert_eq!(e.expected, "`->`");
        assert!(e.to_string().contains("^"), "{e}");
        let e = "a -> ".parse::<Schedule>().unwrap_err();
        assert_eq!(e.expected, "an event name");
        assert_eq!(e.found, "the end of the schedule");
        let e = "a -> b c".parse::<Schedule>().unwrap_err();
        assert_eq!(e.column, 8);
        let e = "[a -> b".parse::<Schedule>().unwrap_err();
        assert_eq!(e.expected, "`]`");
        let e = "a@ -> b".parse::<Schedule>().unwrap_err();
        assert_eq!(e.expected, "a thread name after `@`");
        assert!("".parse::<Schedule>().is_err());
        let e = "a -> end@t".parse::<Schedule>().unwrap_err();
        assert_eq!(e.column, 6, "{e}");
    }
}
