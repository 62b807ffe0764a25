//! A bank of account actors. A teller moves money by telling one account
//! to withdraw and, once it confirms, the other to deposit; an auditor asks
//! both accounts for their balances. While a transfer is in flight the
//! money is in neither account, and the audit's total comes out short.
//!
//! With the argument `correct`, audits go through the teller, which runs
//! one request at a time: an audit waits for the transfer in flight, and a
//! transfer for the audit in progress.
use weft_guest::actors::{self, Actor, ActorId, Context, Envelope, Handled};

struct Account {
    balance: u8,
}

impl Actor for Account {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Withdraw" => {
                self.balance -= msg.body[0];
                cx.reply("Withdrawn", msg.body);
            }
            "Deposit" => {
                self.balance += msg.body[0];
                cx.reply("Deposited", msg.body);
            }
            "Balance" => cx.reply("Balance", &[self.balance]),
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

/// A request the correct teller runs one at a time.
enum Request {
    Transfer(u8),
    Audit(ActorId),
}

struct Teller {
    accounts: [ActorId; 2],
    busy: bool,
    waiting: Vec<Request>,
    /// Balances gathered for the audit in progress.
    gathered: Vec<u8>,
    auditor: Option<ActorId>,
}

impl Teller {
    fn start(&mut self, cx: &mut Context, request: Request) {
        if self.busy {
            self.waiting.push(request);
            return;
        }
        self.busy = true;
        match request {
            Request::Transfer(amount) => cx.send(self.accounts[0], "Withdraw", &[amount]),
            Request::Audit(auditor) => {
                self.auditor = Some(auditor);
                for account in self.accounts {
                    cx.send(account, "Balance", b"");
                }
            }
        }
    }

    fn done(&mut self, cx: &mut Context) {
        self.busy = false;
        if !self.waiting.is_empty() {
            let next = self.waiting.remove(0);
            self.start(cx, next);
        }
    }
}

impl Actor for Teller {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Transfer" => self.start(cx, Request::Transfer(msg.body[0])),
            "Withdrawn" => cx.send(self.accounts[1], "Deposit", msg.body),
            "Deposited" => self.done(cx),
            "AuditForMe" => {
                let auditor = cx.sender();
                self.start(cx, Request::Audit(auditor));
            }
            "Balance" => {
                self.gathered.push(msg.body[0]);
                if self.gathered.len() == 2 {
                    let auditor = self.auditor.take().expect("an audit in progress");
                    for balance in self.gathered.drain(..) {
                        cx.send(auditor, "Balance", &[balance]);
                    }
                    self.done(cx);
                }
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

struct Auditor {
    accounts: [ActorId; 2],
    teller: ActorId,
    seen: Vec<u8>,
    correct: bool,
}

impl Actor for Auditor {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Audit" if self.correct => cx.send(self.teller, "AuditForMe", b""),
            "Audit" => {
                for account in self.accounts {
                    cx.send(account, "Balance", b"");
                }
            }
            "Balance" => self.seen.push(msg.body[0]),
            "Total" => {
                let total: u32 = self.seen.iter().map(|&b| b as u32).sum();
                cx.reply("Total", &[total as u8]);
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

fn main() {
    let correct = std::env::args().nth(1).as_deref() == Some("correct");
    actors::run(|driver| {
        let a = driver.spawn("Account", Account { balance: 100 });
        let b = driver.spawn("Account", Account { balance: 50 });
        let teller = driver.spawn(
            "Teller",
            Teller {
                accounts: [a, b],
                busy: false,
                waiting: Vec::new(),
                gathered: Vec::new(),
                auditor: None,
            },
        );
        let auditor = driver.spawn(
            "Auditor",
            Auditor {
                accounts: [a, b],
                teller,
                seen: Vec::new(),
                correct,
            },
        );
        driver.send(teller, "Transfer", &[30]);
        driver.send(auditor, "Audit", b"");
        driver.settle();
        let total = driver.ask(auditor, "Total", b"");
        assert_eq!(total.body, [150], "the audit saw money in flight");
    });
}
