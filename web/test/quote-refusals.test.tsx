import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { ApiError } from '../src/api/errors';
import { groupRefusals } from '../src/components/quote-refusals';
import { renderPages } from './render-pages';
import { apiError, fakeApi, meBody } from './fake-api';

// What the planner answers for an unsatisfiable request (src/domain/scheduling/plan.ts, lease-planner.ts): groups
// numbered from 0 over the groups sent, then one per named node.
const MESSAGE =
  'the request cannot be met from 2030-01-01T00:00:00.000Z: group 1 (2 × gpus >= 1): 4 match, 3 allowed, 1 free — short by 1 ' +
  '(1 not offered to you; 2 already leased in the window); group 2 (1 × memory >= 1TiB): 0 match, 0 allowed, 0 free — short by 1; ' +
  'group 3 (1 × node cpu-1): 1 match, 1 allowed, 1 free; earliest start: 2030-01-04T00:10:00.000Z';
const GROUPS = [
  { group: 0, count: 2, where: 'gpus >= 1', matching: 4, allowed: 3, free: 1, reasons: ['1 not offered to you', '2 already leased in the window'], taken: ['gpu-02', 'gpu-03'] },
  { group: 1, count: 1, where: 'memory >= 1TiB', matching: 0, allowed: 0, free: 0, reasons: [], taken: [] },
  { group: 2, count: 1, where: 'node cpu-1', matching: 1, allowed: 1, free: 1, reasons: [], taken: [] },
];

function setup(details: Record<string, unknown>, message = MESSAGE) {
  const quotes: Record<string, unknown>[] = [];
  const api = fakeApi({
    'GET /v1/me': () => meBody('member'),
    'GET /v1/nodes': () => ({ nodes: [], next: null }),
    'POST /v1/leases/quote': async (req) => {
      quotes.push((await req.json()) as Record<string, unknown>);
      return apiError(409, 'lease_unavailable', message, details);
    },
  });
  renderPages('/leases/new', api.fetch);
  return { quotes };
}

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test('a refusal is a list by group, numbered as the form numbers its groups, with the matching, allowed and free counts and why', async () => {
  const user = userEvent.setup();
  const { quotes } = setup({ earliest_start: '2030-01-04T00:10:00.000Z', groups: GROUPS });
  await user.type(await screen.findByLabelText('Group 1 Requirement expression'), 'gpus >= 1');
  await user.clear(screen.getByLabelText('Group 1 Count'));
  await user.type(screen.getByLabelText('Group 1 Count'), '2');
  await user.click(screen.getByRole('button', { name: 'Add a group' }));
  await user.type(screen.getByLabelText('Group 2 Requirement expression'), 'memory >= 1TiB');
  await user.type(screen.getByLabelText('Named nodes'), 'cpu-1');

  // The quote is asked as one types (debounced): a refusal may show for a request typed half-way first. Wait for the
  // request as typed in full, and for the list answering it.
  await waitFor(() => expect(quotes.at(-1)).toMatchObject({ groups: [{ count: 2 }, { count: 1 }], nodes: ['cpu-1'] }));
  const list = await screen.findByRole('list', { name: 'Why, by group' });
  await waitFor(() =>
    expect(within(list).getAllByRole('listitem').filter((li) => li.parentElement === list).map((li) => li.getAttribute('aria-label'))).toEqual([
      'Group 1',
      'Group 2',
      'Named node',
    ]),
  );

  const first = within(list).getByRole('listitem', { name: 'Group 1' });
  expect(within(first).getByText('2 × gpus >= 1')).toBeTruthy();
  const counts = [...first.querySelectorAll('dl > div')].map((d) => `${d.querySelector('dt')!.textContent}=${d.querySelector('dd')!.textContent}`);
  expect(counts).toEqual(['matching=4', 'allowed=3', 'free=1']);
  expect(within(first).getByText('Short by 1 (needs 2).')).toBeTruthy();
  const reasons = within(first).getByRole('list', { name: 'Group 1: why not the others' });
  expect(within(reasons).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['1 not offered to you', '2 already leased in the window']);
  expect(first.textContent).toContain('Leased by others then: gpu-02, gpu-03');

  expect(within(list).getByRole('listitem', { name: 'Group 2' }).textContent).toContain('Short by 1 (needs 1).');
  const named = within(list).getByRole('listitem', { name: 'Named node' });
  expect(named.textContent).toContain('cpu-1');
  expect(named.textContent).toContain('Enough on its own (needs 1).');

  // Not one red paragraph: the server's sentence is there, folded away, and the earliest start is offered.
  expect(screen.getByText("The server's message").closest('details')!.open).toBe(false);
  expect(screen.getByText(MESSAGE)).toBeTruthy();
  expect(screen.getByRole('button', { name: 'Use the earliest start' })).toBeTruthy();
});

test('an empty group in the form is not sent, and the list still names the groups by their place in the form', async () => {
  const user = userEvent.setup();
  setup({ earliest_start: null, groups: [{ ...GROUPS[1], group: 0 }] });
  await user.click(await screen.findByRole('button', { name: 'Add a group' }));
  // Group 1 left empty: the API's group 0 is the form's Group 2.
  await user.type(screen.getByLabelText('Group 2 Requirement expression'), 'memory >= 1TiB');
  const list = await screen.findByRole('list', { name: 'Why, by group' });
  expect(within(list).getByRole('listitem', { name: 'Group 2' }).textContent).toContain('1 × memory >= 1TiB');
  expect(screen.queryByRole('button', { name: 'Use the earliest start' })).toBeNull();
});

test('groups that each have enough but want the same nodes are told so', async () => {
  const user = userEvent.setup();
  const both = [
    { group: 0, count: 1, where: 'gpus >= 1', matching: 1, allowed: 1, free: 1, reasons: [], taken: [] },
    { group: 1, count: 1, where: 'gpus >= 1', matching: 1, allowed: 1, free: 1, reasons: [], taken: [] },
  ];
  setup({ earliest_start: null, groups: both }, 'the request cannot be met');
  await user.type(await screen.findByLabelText('Group 1 Requirement expression'), 'gpus >= 1');
  await user.click(screen.getByRole('button', { name: 'Add a group' }));
  await user.type(screen.getByLabelText('Group 2 Requirement expression'), 'gpus >= 1');
  expect(await screen.findByText(/Each group has enough free nodes on its own, but not all at once/)).toBeTruthy();
});

test('a refusal without a group report (the quota) is shown as the server says it', async () => {
  const user = userEvent.setup();
  const quota = 'quota: project may hold 10 node-hours in 2030-01; 2 remain';
  setup({ rule: 'quota.max_node_hours', month: '2030-01' }, quota);
  await user.type(await screen.findByLabelText('Group 1 Requirement expression'), 'gpus >= 1');
  expect(await screen.findByText(quota)).toBeTruthy();
  expect(screen.queryByRole('list', { name: 'Why, by group' })).toBeNull();
});

test('only a 409 with a well-formed report becomes a list', () => {
  expect(groupRefusals(new ApiError(409, 'lease_unavailable', 'x', { groups: GROUPS }))).toHaveLength(3);
  expect(groupRefusals(new ApiError(400, 'invalid_request', 'x', { groups: GROUPS }))).toBeNull();
  expect(groupRefusals(new ApiError(409, 'lease_unavailable', 'x', { groups: [{ ...GROUPS[0], free: 'one' }] }))).toBeNull();
  expect(groupRefusals(new ApiError(409, 'lease_unavailable', 'x', { groups: [] }))).toBeNull();
  expect(groupRefusals(new Error('x'))).toBeNull();
});
