//! One script call to Redis within the budget. The call owns everything it needs, so a call
//! that misses the budget keeps running in the background: the request is decided without it,
//! and the late reply still teaches this instance what Redis decided.

use super::knowledge::{Knowledge, OwnedTake};
use super::reply;
use super::RedisStore;
use crate::limiter::{Assessment, Assessments, LimiterError, Mode, Take};
use redis::{Cmd, ErrorKind, ServerErrorKind, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

/// A script call's raw reply, owned so that it can finish after the caller stopped waiting.
type Pending = Pin<Box<dyn Future<Output = Result<Vec<Value>, LimiterError>> + Send>>;

impl RedisStore {
    /// One script call: the answers for `takes`, and the Redis time it ran at.
    pub async fn call(&self, takes: &[Take<'_>]) -> Result<(u64, Assessments), LimiterError> {
        let asked_at = self.clock.now_us();
        let mut pending = self.send(takes).await?;
        let started = Instant::now();
        match tokio::time::timeout(self.timeout, &mut pending).await {
            Ok(reply) => {
                self.metrics
                    .call_seconds
                    .observe(started.elapsed().as_secs_f64());
                reply::parse(&reply?, takes.len())
            }
            Err(_) => {
                self.finish_late(pending, takes, asked_at);
                Err(LimiterError::Timeout)
            }
        }
    }

    /// The EVALSHA of `takes` on the connection, reloading the script if Redis lost it.
    async fn send(&self, takes: &[Take<'_>]) -> Result<Pending, LimiterError> {
        let mut conn = self.connection.get().await?;
        let evalsha = self.evalsha(takes);
        let load = self.script.load_command();
        Ok(Box::pin(async move {
            let store_error = |e: redis::RedisError| LimiterError::Store(e.to_string());
            match evalsha.query_async::<Vec<Value>>(&mut conn).await {
                Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                    load.query_async::<String>(&mut conn)
                        .await
                        .map_err(store_error)?;
                    evalsha.query_async(&mut conn).await.map_err(store_error)
                }
                reply => reply.map_err(store_error),
            }
        }))
    }

    /// `EVALSHA sha n key… margin (capacity rate cost mode)…` for `takes` (see lua/take.lua).
    fn evalsha(&self, takes: &[Take<'_>]) -> Cmd {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(self.script.hash()).arg(takes.len());
        for take in takes {
            cmd.arg(self.key(take));
        }
        cmd.arg(self.ttl_margin_ms);
        for take in takes {
            cmd.arg(take.spec.capacity())
                .arg(take.spec.rate_per_second())
                .arg(take.cost)
                .arg(u8::from(take.mode == Mode::Shadow));
        }
        cmd
    }

    /// Lets a call that missed its budget finish in the background; its answer, if it comes,
    /// is learned as if it had been on time.
    fn finish_late(&self, pending: Pending, takes: &[Take<'_>], asked_at: u64) {
        let knowledge: Arc<Knowledge> = self.knowledge.clone();
        let owned: Vec<OwnedTake> = takes.iter().map(OwnedTake::from).collect();
        tokio::spawn(async move {
            let Ok(reply) = pending.await else { return };
            let Ok((_, answers)) = reply::parse(&reply, owned.len()) else {
                return;
            };
            knowledge.learn_late(&owned, &answers, asked_at);
        });
    }

    /// One call for `takes`; on a Cluster, one call per identity, all at once, since a call
    /// may only touch one slot. All or nothing then holds within each identity's buckets.
    pub(super) async fn call_per_slot(
        &self,
        takes: &[Take<'_>],
    ) -> Result<Assessments, LimiterError> {
        let first = takes.first().map(|t| t.key.identity);
        if !self.connection.is_cluster() || takes.iter().all(|t| Some(t.key.identity) == first) {
            return self.call(takes).await.map(|(_, assessments)| assessments);
        }
        let groups = identity_groups(takes);
        let calls = groups.iter().map(|group| {
            let group_takes: Vec<Take<'_>> = group.iter().map(|&i| takes[i]).collect();
            async move { self.call(&group_takes).await.map(|(_, a)| a) }
        });
        let answers = futures::future::try_join_all(calls).await?;
        let mut placed: Vec<Option<Assessment>> = vec![None; takes.len()];
        for (group, answer) in groups.iter().zip(answers) {
            for (&i, a) in group.iter().zip(answer) {
                placed[i] = Some(a);
            }
        }
        Ok(placed.into_iter().flatten().collect())
    }
}

/// The positions of `takes`, grouped by identity in order of first appearance.
fn identity_groups(takes: &[Take<'_>]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, take) in takes.iter().enumerate() {
        match groups
            .iter_mut()
            .find(|g| takes[g[0]].key.identity == take.key.identity)
        {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}
