/**
 * Where the live heap comes from, cheaply: V8's sampling heap profiler (one allocation in about every 32 KB
 * sampled, kept while the object lives) read every few seconds; the reading with the most live bytes is kept and
 * summed per allocation site and per the nearest frame of the service's own code (functions/). Allocations not
 * yet collected count too, so it is an upper bound of what each site holds live.
 */
import { Session } from 'node:inspector/promises';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

export interface HeapSites {
  /** MB sampled live in the fullest reading. */
  totalMb: number;
  /** The sites holding the most, MB each: the allocating frame, and the service's own frame nearest to it. */
  bySite: { site: string; mb: number }[];
  byOwnFrame: { site: string; mb: number }[];
}

const frameName = (f: ProfileNode['callFrame']) =>
  `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(functions|node_modules|test)\//, '$1/')}:${f.lineNumber + 1}`;

function top(sizes: Map<string, number>, n: number) {
  return [...sizes]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([site, bytes]) => ({ site, mb: bytes / 1024 ** 2 }));
}

function summarise(root: ProfileNode): HeapSites {
  const bySite = new Map<string, number>();
  const byOwnFrame = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode, own: string) => {
    const here = node.callFrame.url.includes('/functions/') ? frameName(node.callFrame) : own;
    if (node.selfSize > 0) {
      total += node.selfSize;
      const site = frameName(node.callFrame);
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
      byOwnFrame.set(here, (byOwnFrame.get(here) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(root, '(outside functions/)');
  return { totalMb: total / 1024 ** 2, bySite: top(bySite, 12), byOwnFrame: top(byOwnFrame, 12) };
}

/** Starts sampling; `stop()` ends it and answers the fullest reading. */
export async function startHeapSampler(
  everyMs = 10_000,
): Promise<{ stop(): Promise<HeapSites | undefined> }> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', { samplingInterval: 32_768 });
  let fullest: HeapSites | undefined;
  let reading = false;
  const read = async () => {
    if (reading) return;
    reading = true;
    try {
      const { profile } = (await session.post('HeapProfiler.getSamplingProfile')) as {
        profile: { head: ProfileNode };
      };
      const sites = summarise(profile.head);
      if (!fullest || sites.totalMb > fullest.totalMb) fullest = sites;
    } finally {
      reading = false;
    }
  };
  const timer = setInterval(() => void read(), everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await session.post('HeapProfiler.stopSampling');
      session.disconnect();
      return fullest;
    },
  };
}
