import { PowerTarget, ProvisionState as S, ProvisionVerb as V } from '../hardware-driver.js';
import type { ProvisionVerb } from '../hardware-driver.js';
import type { BootKind } from './boot-output.js';
import { ironicMessages } from './ironic-messages.js';
import type { SimulatedTimings } from './simulated-types.js';

/**
 * Ironic's provision state machine (ironic/common/states.py) for the verbs of the HardwareDriver port, as a pure
 * function from (state, verb) to a plan: the stages the node goes through and where it ends. The driver runs
 * the plan on its clock; nothing here reads the time or mutates a node.
 */

/** What may go wrong when a stage ends; the driver decides (from injected faults) whether it does. */
export const StageCheck = {
  /** Verifying the BMC (enroll → manageable): fails with the power fault. */
  Verify: 'verify',
  /** The conductor validates the requested manual clean steps before running them. */
  CleanSteps: 'clean-steps',
  /** The ramdisk runs the clean steps: fails with the cleaning fault. */
  CleanRun: 'clean-run',
  /** The ramdisk writes the image: fails with the deploy fault. */
  DeployRun: 'deploy-run',
} as const;
export type StageCheck = (typeof StageCheck)[keyof typeof StageCheck];

export interface ProvisionStage {
  readonly state: string;
  readonly target: string | null;
  /**
   * Whether the conductor holds the node's lock: false in the `* wait` states, where Ironic has handed the work
   * to the ramdisk and released the lock (the only time `abort` is accepted, and PATCH works meanwhile).
   */
  readonly locked: boolean;
  readonly ms: number;
  /** Power action taken as the stage starts (booting the ramdisk, tearing down). */
  readonly power?: PowerTarget;
  /** What boots when `power` starts the machine. */
  readonly boot?: BootKind;
  readonly check?: StageCheck;
}

export interface ProvisionPlan {
  /** Empty for the transitions Ironic completes within the request (e.g. available → manageable). */
  readonly stages: readonly ProvisionStage[];
  readonly final: string;
  readonly finalPower?: PowerTarget;
  /** Keep `target_provision_state` at the end (Ironic keeps it on failure states, e.g. `clean failed`). */
  readonly keepTarget?: boolean;
  readonly lastError?: string;
}

/** How a failed check leaves the node. */
export interface StageFailure {
  readonly state: string;
  readonly lastError: string;
  /** Ironic puts a node into maintenance when a clean step fails while running, not when validation fails. */
  readonly maintenance: boolean;
  readonly power?: PowerTarget;
  /** Failure states keep `target_provision_state` in Ironic; a failed verification returns to stable `enroll`. */
  readonly keepTarget: boolean;
}

export interface PlanContext {
  readonly uuid: string;
  readonly timings: SimulatedTimings;
}

/** The plan for `verb` from `state`, or null when Ironic's state machine does not allow it. */
export function planProvision(state: string, verb: ProvisionVerb, ctx: PlanContext): ProvisionPlan | null {
  const t = ctx.timings;
  switch (verb) {
    case V.Manage:
      if (state === S.Enroll) {
        const verify = { state: S.Verifying, target: S.Manageable, locked: true, ms: t.manageMs, check: StageCheck.Verify };
        return { stages: [verify], final: S.Manageable };
      }
      if (state === S.Available || state === S.CleanFailed) return { stages: [], final: S.Manageable };
      return null;
    case V.Provide:
      return state === S.Manageable ? cleaning(S.Available, t.cleanMs) : null;
    case V.Clean:
      return state === S.Manageable ? cleaning(S.Manageable, t.cleanMs) : null;
    case V.Deploy:
      return state === S.Available || state === S.DeployFailed ? deploying(t.deployMs) : null;
    case V.Rebuild:
      return state === S.Active || state === S.DeployFailed || state === S.Error ? deploying(t.deployMs) : null;
    case V.Undeploy: {
      const deletable: readonly string[] = [S.Active, S.DeployFailed, S.DeployWait, S.Error];
      if (!deletable.includes(state)) return null;
      const clean = cleaning(S.Available, t.cleanMs);
      const tearDown = { state: S.Deleting, target: S.Available, locked: true, ms: t.undeployMs, power: PowerTarget.Off };
      return { ...clean, stages: [tearDown, ...clean.stages] };
    }
    case V.Abort:
      // Ironic accepts abort only in the wait states; of those the port reaches, cleaning's is abortable.
      if (state !== S.CleanWait) return null;
      return {
        stages: [],
        final: S.CleanFailed,
        finalPower: PowerTarget.Off,
        keepTarget: true,
        lastError: ironicMessages.cleanAborted(),
      };
    default:
      return null;
  }
}

/** How the node ends when `check` fails; `step` names the clean step concerned. */
export function stageFailure(check: StageCheck, uuid: string, step: string): StageFailure {
  switch (check) {
    case StageCheck.Verify:
      return { state: S.Enroll, lastError: ironicMessages.verifyFailed(uuid), maintenance: false, keepTarget: false };
    case StageCheck.CleanSteps:
      return {
        state: S.CleanFailed,
        lastError: ironicMessages.unsupportedCleanStep(uuid, step),
        maintenance: false,
        power: PowerTarget.Off,
        keepTarget: true,
      };
    case StageCheck.CleanRun:
      return {
        state: S.CleanFailed,
        lastError: ironicMessages.cleanStepFailed(uuid, step),
        maintenance: true,
        power: PowerTarget.Off,
        keepTarget: true,
      };
    case StageCheck.DeployRun:
      return { state: S.DeployFailed, lastError: ironicMessages.deployFailed(uuid), maintenance: false, keepTarget: true };
  }
}

/** Which provision verbs remain possible in maintenance (the rest are refused, as Ironic's conductor does). */
export function allowedInMaintenance(verb: ProvisionVerb): boolean {
  return verb === V.Manage || verb === V.Abort;
}

/** Ironic's operation names, for the maintenance message. */
export function operationName(verb: ProvisionVerb): string {
  const names: Record<ProvisionVerb, string> = {
    manage: 'manage',
    provide: 'cleaning',
    clean: 'cleaning',
    active: 'provisioning',
    rebuild: 'provisioning',
    deleted: 'tear down',
    abort: 'abort',
  };
  return names[verb];
}

/**
 * Cleaning as a real agent-based cleaning looks from the API: `cleaning` while the conductor boots the ramdisk,
 * `clean wait` while the ramdisk works (lock released), `cleaning` again for the tear down, then power off.
 */
function cleaning(target: string, ms: number): ProvisionPlan {
  const [prepare, run, tearDown] = split(ms, [0.2, 0.7, 0.1]);
  return {
    stages: [
      { state: S.Cleaning, target, locked: true, ms: prepare, power: PowerTarget.Reboot, boot: 'ramdisk', check: StageCheck.CleanSteps },
      { state: S.CleanWait, target, locked: false, ms: run, check: StageCheck.CleanRun },
      { state: S.Cleaning, target, locked: true, ms: tearDown },
    ],
    final: target,
    finalPower: PowerTarget.Off,
  };
}

/** Deployment: ramdisk boot, `wait call-back` while the image is written, reboot into the instance. */
function deploying(ms: number): ProvisionPlan {
  const [prepare, write, finish] = split(ms, [0.3, 0.6, 0.1]);
  return {
    stages: [
      { state: S.Deploying, target: S.Active, locked: true, ms: prepare, power: PowerTarget.Reboot, boot: 'ramdisk' },
      { state: S.DeployWait, target: S.Active, locked: false, ms: write, check: StageCheck.DeployRun },
      { state: S.Deploying, target: S.Active, locked: true, ms: finish, power: PowerTarget.Reboot, boot: 'os' },
    ],
    final: S.Active,
    finalPower: PowerTarget.On,
  };
}

/** Splits `total` into three whole-millisecond parts by `fractions` that add up to `total` exactly. */
function split(total: number, fractions: readonly [number, number, number]): [number, number, number] {
  const first = Math.round(total * fractions[0]);
  const second = Math.max(0, Math.round(total * (fractions[0] + fractions[1])) - first);
  return [first, second, Math.max(0, total - first - second)];
}
