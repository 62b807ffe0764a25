//! Connected components, computed the way graph frameworks with vertex
//! actors compute them: in supersteps. Every vertex starts with its own
//! number as its label. In each step a vertex takes the smallest label its
//! neighbours sent it in the step before, and when its label went down (or
//! in the first step) sends the new label to its neighbours. A coordinator
//! starts a step by telling every vertex, and starts the next one once each
//! vertex reported the step done; when a step changed no label, the
//! computation is over and the labels name the components.
//!
//! The bug: a vertex reports its step done as soon as it has sent its
//! labels. Those labels and the coordinator's next `Step` come from
//! different senders, so nothing keeps a label from arriving after the
//! neighbour already began the next step. The neighbour then computes that
//! step without it, and if no other label changed, the coordinator ends the
//! computation with the late label still unread: one component ends up
//! with two labels.
//!
//! With the argument `correct`, a neighbour acknowledges every label, and a
//! vertex reports its step done only once all its labels were acknowledged:
//! every label of a step is read before the next step starts.
use weft_guest::actors::{self, Actor, ActorId, Context, Envelope, Handled};

/// The graph: two components, {0, 1, 2, 3} (a path 3 - 1 - 0 - 2 with a
/// chord 2 - 3) and {4, 5}.
const EDGES: [(usize, usize); 5] = [(3, 1), (1, 0), (0, 2), (2, 3), (5, 4)];
const VERTICES: usize = 6;

/// The components' labels: each vertex's smallest reachable number.
const EXPECTED: [u8; VERTICES] = [0, 0, 0, 0, 4, 4];

struct Vertex {
    label: u8,
    /// The smallest label received for the next step.
    inbox: Option<u8>,
    neighbours: Vec<ActorId>,
    coordinator: ActorId,
    /// Labels sent this step and not yet acknowledged (correct variant).
    unacknowledged: usize,
    /// Whether this step changed the label, to report once acknowledged.
    changed: bool,
    correct: bool,
}

impl Vertex {
    fn report(&self, cx: &Context) {
        cx.send(
            self.coordinator,
            "StepDone",
            &[u8::from(self.changed), self.label],
        );
    }
}

impl Actor for Vertex {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Label" => {
                let label = msg.body[0];
                self.inbox = Some(self.inbox.map_or(label, |l| l.min(label)));
                if self.correct {
                    cx.reply("Ack", b"");
                }
            }
            "Ack" => {
                self.unacknowledged -= 1;
                if self.unacknowledged == 0 {
                    self.report(cx);
                }
            }
            "Step" => {
                let first = msg.body[0] == 0;
                let before = self.label;
                if let Some(received) = self.inbox.take() {
                    self.label = self.label.min(received);
                }
                self.changed = self.label < before;
                if first || self.changed {
                    cx.become_("sending");
                    for &n in &self.neighbours {
                        cx.send(n, "Label", &[self.label]);
                    }
                    self.unacknowledged = self.neighbours.len();
                } else {
                    cx.become_("quiet");
                }
                // A first step reports a change so that a second one runs.
                self.changed |= first;
                if !self.correct || self.unacknowledged == 0 {
                    self.report(cx);
                }
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

struct Coordinator {
    vertices: Vec<ActorId>,
    step: u8,
    reported: usize,
    changed: bool,
    labels: [u8; VERTICES],
    finished: bool,
}

impl Coordinator {
    fn start_step(&mut self, cx: &Context) {
        self.reported = 0;
        self.changed = false;
        for &v in &self.vertices {
            cx.send(v, "Step", &[self.step]);
        }
    }
}

impl Actor for Coordinator {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Register" => {
                self.vertices = msg.body.iter().map(|&v| ActorId::from(v)).collect();
            }
            "Start" => self.start_step(cx),
            "StepDone" => {
                let vertex = self
                    .vertices
                    .iter()
                    .position(|&v| v == cx.sender())
                    .expect("a vertex");
                self.changed |= msg.body[0] != 0;
                self.labels[vertex] = msg.body[1];
                self.reported += 1;
                if self.reported == self.vertices.len() {
                    if self.changed {
                        self.step += 1;
                        self.start_step(cx);
                    } else {
                        cx.become_("finished");
                        self.finished = true;
                    }
                }
            }
            "Components" => {
                let mut body = vec![u8::from(self.finished)];
                body.extend_from_slice(&self.labels);
                cx.reply("Components", &body);
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

fn main() {
    let correct = std::env::args().nth(1).as_deref() == Some("correct");
    actors::run(|driver| {
        let coordinator = driver.spawn(
            "Coordinator",
            Coordinator {
                vertices: Vec::new(),
                step: 0,
                reported: 0,
                changed: false,
                labels: [0; VERTICES],
                finished: false,
            },
        );
        // Actor ids are handed out in order of creation.
        let first = coordinator + 1;
        let ids: Vec<ActorId> = (0..VERTICES).map(|v| first + v as ActorId).collect();
        for v in 0..VERTICES {
            let neighbours = EDGES
                .iter()
                .filter_map(|&(a, b)| match (a == v, b == v) {
                    (true, _) => Some(ids[b]),
                    (_, true) => Some(ids[a]),
                    _ => None,
                })
                .collect();
            let id = driver.spawn(
                "Vertex",
                Vertex {
                    label: v as u8,
                    inbox: None,
                    neighbours,
                    coordinator,
                    unacknowledged: 0,
                    changed: false,
                    correct,
                },
            );
            assert_eq!(id, ids[v]);
        }
        let registered: Vec<u8> = ids.iter().map(|&id| id as u8).collect();
        driver.send(coordinator, "Register", &registered);
        driver.settle();
        driver.send(coordinator, "Start", b"");
        driver.settle();
        let result = driver.ask(coordinator, "Components", b"");
        assert_eq!(result.body[0], 1, "the computation did not finish");
        assert_eq!(
            &result.body[1..],
            &EXPECTED,
            "the labels do not name the components"
        );
    });
}
