// Loaded into the API process with `node --import` by scenarios that play Amazon SNS
// (ses-send-events.ts): answers the one SNS certificate URL of the runner's signer with its
// certificate, so the API checks every notification's signature for real without reaching the
// internet. Every other URL goes to the real fetch.
const certUrl = process.env.FAULTS_SNS_CERT_URL;
const certPem = process.env.FAULTS_SNS_CERT_PEM;

if (certUrl && certPem) {
  const realFetch = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url === certUrl) return Promise.resolve(new Response(certPem, { status: 200 }));
    return realFetch(input, init);
  };
}
