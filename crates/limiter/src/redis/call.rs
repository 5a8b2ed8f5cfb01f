//! One decision's call to Redis within the budget: it joins the next round of the batcher, and
//! the request waits for its answer no longer than the budget (the round still learns a late
//! answer). Takes of several identities go as one decision per identity, all at once.

use super::RedisStore;
use crate::{Assessment, Assessments, LimiterError, Take};

impl RedisStore {
    /// The answers for `takes` (all of one identity) within the budget, and the Redis time
    /// (µs) they were decided at.
    pub async fn call(&self, takes: &[Take<'_>]) -> Result<(u64, Assessments), LimiterError> {
        let answer = self.batcher.submit(takes, self.clock.now_us());
        match tokio::time::timeout(self.timeout, answer).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(LimiterError::Store("the call was dropped".into())),
            Err(_) => Err(LimiterError::Timeout),
        }
    }

    /// One decision for `takes`, or one per identity when policies identify the caller
    /// differently (on a Cluster their keys live in different slots): all or nothing then
    /// holds within each identity's buckets.
    pub(super) async fn call_per_identity(
        &self,
        takes: &[Take<'_>],
    ) -> Result<Assessments, LimiterError> {
        let first = takes.first().map(|t| t.key.identity);
        if takes.iter().all(|t| Some(t.key.identity) == first) {
            return self.call(takes).await.map(|(_, answer)| answer);
        }
        let groups = identity_groups(takes);
        let calls = groups.iter().map(|group| {
            let group_takes: Vec<Take<'_>> = group.iter().map(|&i| takes[i]).collect();
            async move { self.call(&group_takes).await.map(|(_, answer)| answer) }
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
