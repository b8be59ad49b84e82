import { cleanup, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { buildRequest, errorField, fromUtcInput, QUOTE_DEBOUNCE_MS, toUtcInput } from '../src/pages/lease-request-page';
import { ApiError } from '../src/api/errors';
import { renderPages } from './render-pages';
import { apiError, fakeApi, json, meBody, type Handler } from './fake-api';

// The API's own wording (src/scheduler/lease-planner.ts, src/domain/scheduling/plan.ts): shown as is.
const UNMET =
  'the request cannot be met from 2030-01-01T00:00:00.000Z: group 1 (2 × gpus >= 1): 4 match, 4 allowed, 1 free — short by 1 ' +
  '(3 already leased in the window); earliest start: 2030-01-04T00:10:00.000Z';
const UNKNOWN_FACT = 'groups[1].where: unknown fact "ram" at position 1; known facts: cpu_arch, cpus, disk, gpus, memory, resource_class';

const QUOTE = {
  start: '2030-01-01T00:00:00.000Z',
  end: '2030-01-02T00:00:00.000Z',
  duration: 'P1D',
  allocations: [
    { node_id: 'n1', node_name: 'gpu-01', group: 0 },
    { node_id: 'n2', node_name: 'gpu-02', group: 0 },
  ],
};

interface Sent {
  body: Record<string, unknown>;
  signal: AbortSignal;
}

function setup(path = '/leases/new', quote?: Handler) {
  const quotes: Sent[] = [];
  const created: Record<string, unknown>[] = [];
  const api = fakeApi({
    'GET /v1/me': () => meBody('member'),
    'GET /v1/nodes': () => ({ nodes: [], next: null }),
    'POST /v1/leases/quote': async (req, url) => {
      const body = (await req.clone().json()) as Record<string, unknown>;
      quotes.push({ body, signal: req.signal });
      if (quote) return quote(req, url);
      return json(QUOTE);
    },
    'POST /v1/leases': async (req) => {
      created.push((await req.json()) as Record<string, unknown>);
      return json({ id: 'L9', name: 'x', state: 'pending', allocations: [] }, 201);
    },
  });
  const location = renderPages(path, api.fetch);
  return { api, location, quotes, created };
}

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test('typing a requirement sends one quote, after the typing stops, and shows which nodes would be picked', async () => {
  const user = userEvent.setup();
  const { quotes } = setup();
  const box = await screen.findByLabelText('Group 1 Requirement expression');
  await user.type(box, 'gpus >= 1');
  expect(quotes).toHaveLength(0); // still within the debounce
  const picked = await screen.findByRole('list', { name: 'Nodes that would be picked' });
  expect(picked.textContent).toBe('Group 1: gpu-01, gpu-02');
  expect(quotes).toHaveLength(1);
  expect(quotes[0]!.body).toEqual({ groups: [{ count: 1, where: 'gpus >= 1' }], duration: '1d' });
  expect(screen.getByText('2030-01-02 00:00 UTC')).toBeTruthy();
  // Nothing new to ask: no second quote.
  await new Promise((r) => setTimeout(r, QUOTE_DEBOUNCE_MS + 100));
  expect(quotes).toHaveLength(1);
});

test('a change while a quote is in flight aborts it and asks again', async () => {
  const user = userEvent.setup();
  let release: () => void = () => undefined;
  const { quotes } = setup('/leases/new', () => new Promise((resolve) => {
    release = () => resolve(json(QUOTE));
  }));
  await user.type(await screen.findByLabelText('Group 1 Requirement expression'), 'gpus >= 1');
  await waitFor(() => expect(quotes).toHaveLength(1));
  const count = screen.getByLabelText('Group 1 Count');
  await user.clear(count);
  await user.type(count, '2');
  await waitFor(() => expect(quotes).toHaveLength(2));
  expect(quotes[0]!.signal.aborted).toBe(true);
  expect(quotes[1]!.body).toMatchObject({ groups: [{ count: 2, where: 'gpus >= 1' }] });
  release();
  expect(await screen.findByRole('list', { name: 'Nodes that would be picked' })).toBeTruthy();
});

test('when it cannot be met, the API’s reasons are shown verbatim with the earliest start, which one button uses', async () => {
  const user = userEvent.setup();
  const { quotes } = setup('/leases/new', (_req) => {
    const body = quotes.at(-1)!.body;
    if (body.start) return json({ ...QUOTE, start: body.start, end: '2030-01-05T00:10:00.000Z' });
    return apiError(409, 'lease_unavailable', UNMET, { earliest_start: '2030-01-04T00:10:00.000Z', groups: [] });
  });
  await user.type(await screen.findByLabelText('Group 1 Requirement expression'), 'gpus >= 1');
  expect(await screen.findByText(UNMET)).toBeTruthy();
  expect(screen.getByText('2030-01-04 00:10 UTC')).toBeTruthy();
  await user.click(screen.getByRole('button', { name: 'Use the earliest start' }));
  expect((screen.getByRole('radio', { name: 'At a time' }) as HTMLInputElement).checked).toBe(true);
  expect((screen.getByLabelText('Start (UTC)') as HTMLInputElement).value).toBe('2030-01-04T00:10');
  expect(await screen.findByRole('list', { name: 'Nodes that would be picked' })).toBeTruthy();
  expect(quotes.at(-1)!.body).toMatchObject({ start: '2030-01-04T00:10:00.000Z' });
});

test('an expression error is shown next to the group it belongs to, marked on that field only', async () => {
  const user = userEvent.setup();
  const { quotes } = setup('/leases/new', () =>
    (quotes.at(-1)!.body.groups as unknown[]).length === 2
      ? apiError(400, 'invalid_request', UNKNOWN_FACT, { field: 'groups.1.where', position: 1 })
      : json(QUOTE),
  );
  await user.type(await screen.findByLabelText('Group 1 Requirement expression'), 'gpus >= 1');
  await user.click(screen.getByRole('button', { name: 'Add a group' }));
  const second = screen.getByLabelText('Group 2 Requirement expression');
  await user.type(second, 'ram >= 1');
  await waitFor(() => expect(second.getAttribute('aria-invalid')).toBe('true'));
  const described = document.getElementById(second.getAttribute('aria-describedby')!);
  expect(described?.textContent).toBe(UNKNOWN_FACT);
  expect(screen.getByLabelText('Group 1 Requirement expression').getAttribute('aria-invalid')).toBeNull();
  // Removing the bad group clears it, and the next quote is for the one group left.
  await user.click(screen.getByRole('button', { name: 'Remove group 2' }));
  expect(await screen.findByRole('list', { name: 'Nodes that would be picked' })).toBeTruthy();
  expect(screen.queryByText(UNKNOWN_FACT)).toBeNull();
});

test('submitting creates the lease with the request as quoted and opens it', async () => {
  const user = userEvent.setup();
  const { created, location } = setup();
  await user.type(await screen.findByLabelText('Name (optional)'), 'seed');
  await user.type(screen.getByLabelText('Group 1 Requirement expression'), 'memory >= 48GiB and gpus >= 1');
  const duration = screen.getByLabelText('Duration');
  await user.clear(duration);
  await user.type(duration, '3d');
  await screen.findByRole('list', { name: 'Nodes that would be picked' });
  await user.click(screen.getByRole('button', { name: 'Request lease' }));
  await waitFor(() => expect(location.history.at(-1)).toBe('/leases/L9'));
  expect(created).toEqual([{ name: 'seed', duration: '3d', groups: [{ count: 1, where: 'memory >= 48GiB and gpus >= 1' }] }]);
});

test('from the timeline it arrives with the node and the start filled in, the start shown in UTC and local time', async () => {
  const start = new Date(Date.now() + 2 * 86_400_000);
  start.setUTCMinutes(0, 0, 0);
  const { quotes } = setup(`/leases/new?node=gpu-07&start=${encodeURIComponent(start.toISOString())}`);
  expect(((await screen.findByLabelText('Named nodes')) as HTMLInputElement).value).toBe('gpu-07');
  expect((screen.getByRole('radio', { name: 'At a time' }) as HTMLInputElement).checked).toBe(true);
  expect((screen.getByLabelText('Start (UTC)') as HTMLInputElement).value).toBe(start.toISOString().slice(0, 16));
  // The same instant on the viewer's clock beside the UTC field (the shared UtcTimeField).
  const local = document.getElementById(screen.getByLabelText('Start (UTC)').getAttribute('aria-describedby')!.split(' ').at(-1)!)!;
  expect(local.textContent).toMatch(/^Your time: .+ \(.+\)$/);
  expect(local.querySelector('time')!.getAttribute('datetime')).toBe(start.toISOString());
  await waitFor(() => expect(quotes).toHaveLength(1));
  expect(quotes[0]!.body).toEqual({ nodes: ['gpu-07'], start: start.toISOString(), duration: '1d' });
});

describe('the form’s pieces', () => {
  test('start times are entered in UTC and sent as RFC 3339', () => {
    expect(toUtcInput('2030-01-02T10:05:00.000Z')).toBe('2030-01-02T10:05');
    expect(fromUtcInput('2030-01-02T10:05')).toBe('2030-01-02T10:05:00.000Z');
    expect(fromUtcInput('tomorrow')).toBeNull();
  });

  test('a draft becomes a request only when it asks for something; empty groups are left out', () => {
    const draft = { name: '', project: '', groups: [{ key: 1, count: '1', where: '' }], nodes: '', startMode: 'now' as const, startUtc: '', duration: '1d' };
    expect(buildRequest(draft)).toEqual({ incomplete: expect.stringContaining('Describe the nodes') });
    expect(buildRequest({ ...draft, groups: [{ key: 1, count: '0', where: 'gpus >= 1' }] })).toEqual({ incomplete: expect.stringContaining('count') });
    expect(buildRequest({ ...draft, nodes: 'a, b c', groups: [{ key: 1, count: '1', where: '' }, { key: 2, count: '2', where: ' gpus >= 1 ' }] })).toEqual({
      body: { duration: '1d', nodes: ['a', 'b', 'c'], groups: [{ count: 2, where: 'gpus >= 1' }] },
      groupKeys: [2],
    });
  });

  test('the operator’s draft needs a project before anything else, and sends the one chosen', () => {
    const draft = { name: '', project: '', groups: [{ key: 1, count: '1', where: 'gpus >= 1' }], nodes: '', startMode: 'now' as const, startUtc: '', duration: '1d' };
    expect(buildRequest(draft, { projectRequired: true })).toEqual({ incomplete: 'Choose the project the lease is for.' });
    expect(buildRequest({ ...draft, project: 'p-1' }, { projectRequired: true })).toEqual({
      body: { duration: '1d', project: 'p-1', groups: [{ count: 1, where: 'gpus >= 1' }] },
      groupKeys: [1],
    });
    expect(buildRequest(draft)).toEqual({ body: { duration: '1d', groups: [{ count: 1, where: 'gpus >= 1' }] }, groupKeys: [1] });
  });

  test('an API error lands on the field it names: a group by its place in the request, or a top-level field', () => {
    const err = (details: Record<string, unknown>) => new ApiError(400, 'invalid_request', 'x', details);
    expect(errorField(err({ field: 'groups.0.where' }), [7, 9])).toBe('group:7');
    expect(errorField(err({ issues: [{ field: 'body.groups.1.count' }] }), [7, 9])).toBe('group:9');
    expect(errorField(err({ field: 'duration' }), [])).toBe('duration');
    expect(errorField(new ApiError(409, 'lease_unavailable', 'x', {}), [])).toBeNull();
  });
});
