//! The ground truth of a synthetic site: a breadth-first search over the same link function
//! that renders its pages.

use std::collections::VecDeque;

use super::links::{Doc, Target, for_each_link};
use super::{GroundTruth, SiteConfig};

impl SiteConfig {
    /// What a correct same-host crawl from `/index.html` finds: documents, query variants,
    /// distinct URLs and how many sit at each link depth.
    ///
    /// This walks the whole site (O(pages × links_per_page)); it is meant for tests and for
    /// checking a benchmark's result, not for the serving path.
    pub fn ground_truth(&self) -> GroundTruth {
        let n = self.pages;
        // Node numbering: 0 = index, 1..=n = pages, n+1+k = page k's print variant.
        let node_of = |t: Target, current: usize| match t {
            Target::Doc(Doc::Index) => Some(0),
            Target::Doc(Doc::Page(k)) => Some(1 + k),
            Target::Print(k) => Some(n + 1 + k),
            Target::Current => Some(current),
            Target::Elsewhere => None,
        };
        let doc_of = |node: usize| match node {
            0 => Doc::Index,
            i if i <= n => Doc::Page(i - 1),
            // A print variant is the same document, so it has the same links.
            i => Doc::Page(i - n - 1),
        };

        let mut depth = vec![usize::MAX; 2 * n + 1];
        let mut queue = VecDeque::from([0usize]);
        depth[0] = 0;
        // Bounded: each node enters the queue at most once.
        while let Some(node) = queue.pop_front() {
            let next = depth[node] + 1;
            for_each_link(self, doc_of(node), |link| {
                if let Some(t) = node_of(link.href.target(), node)
                    && depth[t] == usize::MAX
                {
                    depth[t] = next;
                    queue.push_back(t);
                }
            });
        }

        let mut depth_counts = Vec::new();
        for &d in depth.iter().filter(|&&d| d != usize::MAX) {
            if depth_counts.len() <= d {
                depth_counts.resize(d + 1, 0);
            }
            depth_counts[d] += 1;
        }
        let documents = depth[..=n].iter().filter(|&&d| d != usize::MAX).count();
        let query_variants = depth[n + 1..].iter().filter(|&&d| d != usize::MAX).count();
        GroundTruth { documents, query_variants, unique_urls: documents + query_variants, depth_counts }
    }
}
