// The Content Security Policy a view runs under, built from its resource's `_meta.ui.csp`.
//
// Used twice: by the test's sandbox server, for the Content-Security-Policy header of
// sandbox.html (which the view's srcdoc frame inherits), and inside sandbox.html itself, for the
// <meta> it adds to the view's HTML. The server pastes this function's source into the page
// (`viewPolicy.toString()`), so it must stay one self-contained function: no imports, no helpers
// outside it.

/**
 * @param {{connectDomains?: string[], resourceDomains?: string[], frameDomains?: string[],
 *          baseUriDomains?: string[]} | undefined} csp
 * @returns {string}
 */
export function viewPolicy(csp) {
  // Only plain sources pass: a quote, semicolon, comma or space in an entry could add a keyword
  // ('unsafe-eval') or a directive of its own.
  const sources = (list) =>
    (Array.isArray(list) ? list : []).filter(
      (entry) => typeof entry === 'string' && /^[A-Za-z0-9*][A-Za-z0-9.*:/_\-[\]]*$/.test(entry),
    );
  const given = csp && typeof csp === 'object' ? csp : {};
  const resources = sources(given.resourceDomains);
  const orNone = (list) => (list.length > 0 ? list.join(' ') : "'none'");
  const plus = (base) => [base, ...resources].join(' ');
  return [
    // Nothing at all unless a directive below allows it.
    "default-src 'none'",
    // A view is one self-contained file: its own inline script and style, and what the resource
    // names; no 'self' (the sandbox's origin serves nothing a view needs) and no eval.
    `script-src ${plus("'unsafe-inline'")}`,
    `style-src ${plus("'unsafe-inline'")}`,
    // Images, fonts and media only from data: URLs (and the named resource domains), so text
    // that became an <img> could not fetch anything.
    `img-src ${plus('data:')}`,
    `font-src ${plus('data:')}`,
    `media-src ${plus('data:')}`,
    // No fetch, XHR, WebSocket or beacon unless the resource names where.
    `connect-src ${orNone(sources(given.connectDomains))}`,
    `frame-src ${orNone(sources(given.frameDomains))}`,
    `base-uri ${orNone(sources(given.baseUriDomains))}`,
    "form-action 'none'",
    "object-src 'none'",
    "worker-src 'none'",
    "manifest-src 'none'",
  ].join('; ');
}
