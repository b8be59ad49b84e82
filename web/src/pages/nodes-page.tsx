import { useApi } from '../auth/session';
import { unwrap } from '../api/errors';
import { useResource } from '../api/use-resource';
import { ErrorNotice } from '../components/error-notice';

export function NodesPage() {
  const api = useApi();
  const nodes = useResource(async (signal) => unwrap(await api.GET('/v1/nodes', { params: { query: { limit: 1000 } }, signal })).nodes, []);
  return (
    <section>
      <h1>Nodes</h1>
      {nodes.loading && <p aria-busy="true">Loading nodes…</p>}
      {nodes.error !== undefined && <ErrorNotice error={nodes.error} retry={nodes.reload} />}
      {nodes.data && nodes.data.length === 0 && <p className="empty">You can see no nodes.</p>}
      {nodes.data && nodes.data.length > 0 && (
        <ul>
          {nodes.data.map((n) => (
            <li key={n.id}>{n.name ?? n.id}</li>
          ))}
        </ul>
      )}
    </section>
  );
}
