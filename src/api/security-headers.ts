import type { MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';

type ContentSecurityPolicy = NonNullable<NonNullable<Parameters<typeof secureHeaders>[0]>['contentSecurityPolicy']>;

/**
 * The response headers of the pages Leasehold serves to browsers (the web UI, /docs): the page's own Content
 * Security Policy plus what every page gets — it cannot be framed (`frame-ancestors 'none'`, and X-Frame-Options for
 * browsers without CSP), sends no Referer (URLs of the UI name leases and nodes), and is never content-sniffed.
 * Strict-Transport-Security is left to whoever terminates TLS: the server itself speaks plain HTTP, and an HSTS
 * header with includeSubDomains from here would bind sibling hosts the operator never meant to.
 */
export function securityHeaders(csp: ContentSecurityPolicy): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      ...csp,
    },
    referrerPolicy: 'no-referrer',
    xContentTypeOptions: 'nosniff',
    xFrameOptions: 'DENY',
    strictTransportSecurity: false,
  });
}
