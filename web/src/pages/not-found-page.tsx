import { Link } from 'wouter';
import { HOME } from '../routes';

export function NotFoundPage() {
  return (
    <section className="card">
      <h1>Page not found</h1>
      <p>There is no page at this address, or your role does not include it.</p>
      <Link href={HOME}>Go to the start page</Link>
    </section>
  );
}
