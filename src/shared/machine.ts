import { hostname } from 'node:os';

/**
 * The machine this process runs on, as a run, an output folder's owner and a
 * job lock record it: `HOSTNAME` when set (containers and CI name their
 * runners this way), else the OS's name. A path recorded by another machine
 * means nothing here, so readers compare against this one name.
 *
 * A lock file's holder is different: whether its pid is alive can only be
 * asked of the OS that issued the pid, so `journal/lock.ts` records and
 * compares the OS's own host name for that check.
 */
export function thisMachine(): string {
  return process.env.HOSTNAME || hostname();
}
