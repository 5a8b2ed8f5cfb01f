//! Coalescing without a timer: decisions that arrive while a call is in flight wait in a queue
//! and go together, as one script call holding one group per decision, as soon as the previous
//! call returns. Idle, a decision is sent at once; under load, batches grow to match. On a
//! Cluster a call may touch one slot only, so each round sends one call per slot, at once.
//!
//! The round's task learns every answer (deny cache, local mirror), also those whose request
//! stopped waiting because the budget ran out: a late reply is never thrown away.

use super::bucket_key;
use super::knowledge::{Knowledge, OwnedTake};
use super::reply;
use super::wire::Wire;
use crate::driver::{slot_of, Connection, Script};
use crate::StoreMetrics;
use crate::{Assessments, BucketSpec, LimiterError, Take};
use parking_lot::Mutex;
use redis::{Cmd, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// One decision waiting to be sent: its takes (one identity), when it was asked, and where its
/// answer goes (nowhere for a call nobody waits on, such as a lease sent back).
struct Job {
    takes: Vec<OwnedTake>,
    asked_at: u64,
    /// Sent even when nobody waits for its answer: a settlement, or a call posted unanswered.
    must_send: bool,
    answer: Option<Sender>,
}

impl Job {
    fn new(takes: &[Take<'_>], asked_at: u64, answer: Option<Sender>) -> Self {
        Self {
            takes: takes.iter().map(OwnedTake::from).collect(),
            asked_at,
            must_send: answer.is_none() || takes.iter().any(|t| t.mode.settles()),
            answer,
        }
    }

    /// Whether the job is still worth sending: a decision whose request stopped waiting (the
    /// budget ran out and `on_error` decided) is not; settlements and calls nobody waits on
    /// always are.
    fn sendable(&self) -> bool {
        self.must_send || self.answer.as_ref().is_some_and(|a| !a.is_closed())
    }
}

/// Where a job's answer goes.
type Sender = oneshot::Sender<Result<Answer, LimiterError>>;

/// Redis's answers for one decision, and the Redis time (µs) they were decided at.
pub(super) type Answer = (u64, Assessments);

#[derive(Default)]
struct Queue {
    waiting: Vec<Job>,
    in_flight: bool,
}

/// Everything a round of calls needs, shared with the task that sends it.
pub(super) struct Batcher {
    queue: Mutex<Queue>,
    connection: Arc<Connection>,
    script: Script,
    prefix: String,
    ttl_margin_ms: u64,
    knowledge: Arc<Knowledge>,
    metrics: StoreMetrics,
    round_budget: Duration,
}

impl Batcher {
    pub(super) fn new(
        connection: Arc<Connection>,
        script: Script,
        prefix: String,
        ttl_margin_ms: u64,
        knowledge: Arc<Knowledge>,
        metrics: StoreMetrics,
        timeout: Duration,
    ) -> Self {
        Self {
            round_budget: timeout.max(Duration::from_millis(500)),
            queue: Mutex::default(),
            connection,
            script,
            prefix,
            ttl_margin_ms,
            knowledge,
            metrics,
        }
    }

    /// The key of a bucket: `prefix:{identity}:policy`.
    pub(super) fn key(&self, take: &Take<'_>) -> String {
        bucket_key(&self.prefix, &take.key)
    }

    /// Queues `takes` (all of one identity) for the next round, starting a round if none is
    /// under way; the answer arrives on the returned receiver.
    pub(super) fn submit(
        self: &Arc<Self>,
        takes: &[Take<'_>],
        asked_at: u64,
    ) -> oneshot::Receiver<Result<Answer, LimiterError>> {
        self.submit_after(&[], takes, asked_at)
    }

    /// Queues `posted` (one identity; nobody waits for its answer) and right behind it
    /// `takes` (of the same identity), so that both go in the same call, in that order; the
    /// answer to `takes` arrives on the returned receiver.
    pub(super) fn submit_after(
        self: &Arc<Self>,
        posted: &[Take<'_>],
        takes: &[Take<'_>],
        asked_at: u64,
    ) -> oneshot::Receiver<Result<Answer, LimiterError>> {
        let (answer, receiver) = oneshot::channel();
        let first = (!posted.is_empty()).then(|| Job::new(posted, asked_at, None));
        self.enqueue(
            first
                .into_iter()
                .chain([Job::new(takes, asked_at, Some(answer))]),
        );
        receiver
    }

    /// Queues `takes` (all of one identity) for the next round, with nobody waiting for the
    /// answer (the round still learns it).
    pub(super) fn post(self: &Arc<Self>, takes: &[Take<'_>], asked_at: u64) {
        self.enqueue([Job::new(takes, asked_at, None)]);
    }

    /// Queues `jobs`, in order, starting a round if none is under way.
    fn enqueue(self: &Arc<Self>, jobs: impl IntoIterator<Item = Job>) {
        let start = {
            let mut queue = self.queue.lock();
            queue.waiting.extend(jobs);
            !std::mem::replace(&mut queue.in_flight, true)
        };
        if start {
            tokio::spawn(self.clone().rounds());
        }
    }

    /// Sends rounds until the queue is empty.
    async fn rounds(self: Arc<Self>) {
        loop {
            let jobs = {
                let mut queue = self.queue.lock();
                if queue.waiting.is_empty() {
                    queue.in_flight = false;
                    return;
                }
                std::mem::take(&mut queue.waiting)
            };
            let calls = by_slot(sendable(jobs), self.connection.is_cluster())
                .into_values()
                .flat_map(chunks)
                .map(|jobs| self.round(jobs));
            futures::future::join_all(calls).await;
        }
    }

    /// One script call for `jobs` (all in one slot); every answer is learned and delivered.
    async fn round(&self, jobs: Vec<Job>) {
        let started = Instant::now();
        // A round never waits longer than this: a node that stops answering without closing
        // the connection must not hold every later decision.
        let reply = match tokio::time::timeout(self.round_budget, self.send(&jobs)).await {
            Ok(reply) => reply,
            Err(_) => Err(LimiterError::Timeout),
        };
        let answers = reply.and_then(|r| {
            let shapes: Vec<Vec<BucketSpec>> = jobs
                .iter()
                .map(|j| j.takes.iter().map(|t| t.take().spec).collect())
                .collect();
            reply::parse_groups(&r, &shapes)
        });
        match answers {
            Ok((now_us, answers)) => {
                self.metrics
                    .call_seconds
                    .observe(started.elapsed().as_secs_f64());
                for (job, answer) in jobs.into_iter().zip(answers) {
                    self.knowledge
                        .learn_owned(&job.takes, &answer, job.asked_at);
                    let Some(waiting) = job.answer else { continue };
                    if waiting.send(Ok((now_us, answer))).is_err() {
                        self.metrics.late_replies.inc();
                    }
                }
            }
            Err(e) => {
                // Each waiting request gets the error as it is: wrapping its text again
                // logged "the store failed: the store failed: …".
                for job in jobs {
                    if let Some(waiting) = job.answer {
                        let _ = waiting.send(Err(e.clone()));
                    }
                }
            }
        }
    }

    /// The EVALSHA of `jobs`, reloading the script if Redis lost it.
    async fn send(&self, jobs: &[Job]) -> Result<Vec<Value>, LimiterError> {
        let mut conn = self.connection.get().await?;
        let evalsha = self.evalsha(jobs);
        self.script
            .run_on::<Vec<Value>>(&evalsha, &mut conn)
            .await
            .map_err(|e| LimiterError::Store(e.to_string()))
    }

    /// `EVALSHA sha nkeys key… margin numbers`, the numbers the call's shapes and groups in one
    /// binary string (`wire`, lua/take.lua).
    fn evalsha(&self, jobs: &[Job]) -> Cmd {
        let keys: usize = jobs.iter().map(|j| j.takes.len()).sum();
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(self.script.hash()).arg(keys);
        let mut wire = Wire::default();
        for job in jobs {
            for take in &job.takes {
                cmd.arg(self.key(&take.take()));
            }
            wire.group(job.takes.iter().map(OwnedTake::take));
        }
        cmd.arg(self.ttl_margin_ms).arg(wire.finish());
        cmd
    }
}

/// The most keys one call carries (Lua's `unpack` of KEYS has a limit near 8,000).
const MAX_KEYS_PER_CALL: usize = 1000;

/// The jobs still worth sending (see [`Job::sendable`]); the others are dropped unsent.
fn sendable(mut jobs: Vec<Job>) -> Vec<Job> {
    jobs.retain(Job::sendable);
    jobs
}

/// `jobs` in calls of at most [`MAX_KEYS_PER_CALL`] keys.
fn chunks(jobs: Vec<Job>) -> Vec<Vec<Job>> {
    let mut calls: Vec<Vec<Job>> = Vec::new();
    let mut keys = 0;
    for job in jobs {
        let n = job.takes.len();
        match calls.last_mut() {
            Some(call) if keys + n <= MAX_KEYS_PER_CALL => call.push(job),
            _ => {
                keys = 0;
                calls.push(vec![job]);
            }
        }
        keys += n;
    }
    calls
}

/// `jobs` grouped by Cluster slot (their identity's hash tag); one group without a Cluster.
fn by_slot(jobs: Vec<Job>, cluster: bool) -> BTreeMap<u16, Vec<Job>> {
    let mut slots: BTreeMap<u16, Vec<Job>> = BTreeMap::new();
    for job in jobs {
        let slot = match (cluster, job.takes.first()) {
            (true, Some(take)) => slot_of(take.identity_hex().as_bytes()),
            _ => 0,
        };
        slots.entry(slot).or_default().push(job);
    }
    slots
}
