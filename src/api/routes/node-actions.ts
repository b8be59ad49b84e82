import { createRoute, z } from '@hono/zod-openapi';
import { ForbiddenError } from '../../domain/errors.js';
import { BootDevice, PowerTarget } from '../../drivers/hardware-driver.js';
import { createRouter, type ApiDeps } from '../context.js';
import { nodeActionGuard, type NodeActionRule } from '../../access/node-action-guard.js';
import { nodeForCaller } from '../../access/node-access.js';
import type { NodeRuleName } from '../../domain/policy-rules/default-rules.js';
import { IdParam, errorResponses, jsonBody, jsonResponse } from '../schemas.js';
import { type Principal, localUserId } from '../../domain/identity.js';

const POWER_TARGETS = { on: PowerTarget.On, off: PowerTarget.Off, reboot: PowerTarget.Reboot } as const;

const power = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/power',
  tags: ['nodes'],
  summary: 'Power a node on, off or reboot it',
  description:
    'The operator, a member of the owning project, or a member of the project whose lease is active on the node ' +
    'right now. Accepted asynchronously (202); the node shows the new power state when it is done.',
  request: { params: IdParam, body: jsonBody(z.object({ action: z.enum(['on', 'off', 'reboot']) }).strict()) },
  responses: {
    202: jsonResponse(
      z.object({ node_id: z.string(), action: z.string(), target_power_state: z.string() }),
      'Accepted',
    ),
    ...errorResponses(400, 401, 403, 404, 409, 503),
  },
});

const bootDevice = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/boot-device',
  tags: ['nodes'],
  summary: "Set a node's boot device",
  request: {
    params: IdParam,
    body: jsonBody(
      z.object({ device: z.enum(Object.values(BootDevice) as [string, ...string[]]), persistent: z.boolean().optional() }).strict(),
    ),
  },
  responses: {
    200: jsonResponse(z.object({ node_id: z.string(), boot_device: z.string(), persistent: z.boolean() }), 'Set'),
    ...errorResponses(400, 401, 403, 404, 409, 503),
  },
});

const readBootDevice = createRoute({
  method: 'get',
  path: '/v1/nodes/{id}/boot-device',
  tags: ['nodes'],
  summary: "Read a node's boot device",
  description:
    'As Ironic reports it (`boot_device` null when the BMC does not say). Policy rule `baremetal:node:get_boot_device`: by default ' +
    "the operator, the owner's managers and the lessee's members while the lease is active.",
  request: { params: IdParam },
  responses: {
    200: jsonResponse(z.object({ node_id: z.string(), boot_device: z.string().nullable(), persistent: z.boolean() }), 'The boot device'),
    ...errorResponses(401, 403, 404, 409, 503),
  },
});

/** Power and boot device for owners, operators and — only while their lease is active — lessees. */
export function nodeActionRoutes(deps: ApiDeps) {
  const router = createRouter();
  const ruleOf = (name: NodeRuleName, refusal: () => Error): NodeActionRule => ({
    allows: (subject) => deps.policy.allows(name, subject),
    refusal,
  });

  /** Records who did what to which node and how it went, whatever happened (the audit log). */
  async function audited<T>(principal: Principal, nodeId: string, ownerProjectId: string | null, type: string, details: Record<string, unknown>, action: () => Promise<T>): Promise<T> {
    const event = { type, actor: principal.userName, actor_user_id: localUserId(principal), node_id: nodeId, project_id: principal.projectId, owner_project_id: ownerProjectId, details };
    try {
      const result = await action();
      await deps.store.leasing.appendEvents([event], deps.clock.now());
      return result;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await deps.store.leasing.appendEvents([{ ...event, outcome: 'error', message }], deps.clock.now()).catch(() => undefined);
      throw err;
    }
  }

  router.openapi(power, async (c) => {
    const principal = c.get('principal');
    const ident = c.req.valid('param').id;
    const found = await nodeForCaller(deps, principal, ident);
    const { node, access } = found;
    const rule = ruleOf('baremetal:node:set_power_state', () =>
      new ForbiddenError('the policy (baremetal:node:set_power_state) does not allow you to change power: readers cannot; a member can'),
    );
    if (!rule.allows(found.subject)) throw rule.refusal();
    const { action } = c.req.valid('json');
    const target = POWER_TARGETS[action];
    // Asked before every attempt the driver makes: a retry on Ironic's "locked" never reaches it after the lease.
    const guard = nodeActionGuard(deps, principal, ident, found, rule);
    await audited(principal, node.id, node.owner_project?.id ?? null, 'node.power', { action, as: access }, () =>
      deps.driver.setPowerState(node.id, target, { guard }),
    );
    deps.inventory.followNode(node.id);
    c.get('log').info({ node: node.id, action }, 'power action');
    return c.json({ node_id: node.id, action, target_power_state: target }, 202);
  });

  router.openapi(bootDevice, async (c) => {
    const principal = c.get('principal');
    const ident = c.req.valid('param').id;
    const found = await nodeForCaller(deps, principal, ident);
    const { node, access } = found;
    const rule = ruleOf('baremetal:node:set_boot_device', () =>
      new ForbiddenError(
        "the policy (baremetal:node:set_boot_device) does not allow you to set the boot device: the owner's managers and the lessee's members can",
      ),
    );
    if (!rule.allows(found.subject)) throw rule.refusal();
    const { device, persistent = false } = c.req.valid('json');
    const guard = nodeActionGuard(deps, principal, ident, found, rule);
    await audited(principal, node.id, node.owner_project?.id ?? null, 'node.boot_device', { device, persistent, as: access }, () =>
      deps.driver.setBootDevice(node.id, device as BootDevice, persistent, { guard }),
    );
    return c.json({ node_id: node.id, boot_device: device, persistent }, 200);
  });

  router.openapi(readBootDevice, async (c) => {
    const principal = c.get('principal');
    const found = await nodeForCaller(deps, principal, c.req.valid('param').id);
    if (!deps.policy.allows('baremetal:node:get_boot_device', found.subject)) {
      throw new ForbiddenError("the policy (baremetal:node:get_boot_device) does not allow you to read the boot device: the owner's managers and the lessee's members can");
    }
    const { boot_device, persistent } = await deps.driver.getBootDevice(found.node.id);
    return c.json({ node_id: found.node.id, boot_device, persistent }, 200);
  });

  return router;
}
