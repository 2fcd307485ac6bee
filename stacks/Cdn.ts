import { Duration, Fn } from "aws-cdk-lib";
import { Certificate } from "aws-cdk-lib/aws-certificatemanager";
import {
  AllowedMethods,
  CachePolicy,
  CacheQueryStringBehavior,
  Distribution,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  OriginRequestHeaderBehavior,
  OriginRequestPolicy,
  PriceClass,
  ResponseHeadersPolicy,
  Function as ViewerFunction,
  ViewerProtocolPolicy,
} from "aws-cdk-lib/aws-cloudfront";
import { HttpOrigin } from "aws-cdk-lib/aws-cloudfront-origins";
import { type StackContext, use } from "sst/constructs";
import { HSTS_MAX_AGE_SECONDS } from "../lib/http/responses.js";
import { EDGE_HEADERS } from "../lib/packaging.js";
import { routeById } from "../lib/routes.js";
import { Api } from "./Api.js";

/** The longest a CDN keeps a signed link's answer: the render cache's longest TTL (30 days). */
export const CDN_MAX_TTL_SECONDS = 2_592_000;

/**
 * CloudFront in front of the API (docs/api.md, "Signed links"): signed screenshot links are cached
 * at the edge by their full query (the signature is in it, so a shared entry is safe) for as long as
 * the answer's Cache-Control says (its cacheTtl; 0 without one), and a hit there never reaches API
 * Gateway or a function. Everything else passes through uncached with the viewer's headers.
 * SHOTLINE_DOMAIN and SHOTLINE_CERTIFICATE_ARN (an ACM certificate for it in us-east-1), set where
 * `sst deploy` runs, serve it on a domain of the operator's (the DNS record is theirs to add:
 * docs/deploy.md); set one without the other and the deploy stops with a message.
 */
export function Cdn({ stack }: StackContext) {
  const { api, edgeSecret } = use(Api);
  const domain = process.env.SHOTLINE_DOMAIN;
  const certificateArn = process.env.SHOTLINE_CERTIFICATE_ARN;
  if (Boolean(domain) !== Boolean(certificateArn)) throw new Error("SHOTLINE_DOMAIN and SHOTLINE_CERTIFICATE_ARN go together: set both, or neither");
  const custom = domain && certificateArn ? { domainNames: [domain], certificate: Certificate.fromCertificateArn(stack, "Certificate", certificateArn) } : {};
  // https://<id>.execute-api.<region>.amazonaws.com -> its host name.
  // Every request to the API carries the edge secret (a viewer's header of that name is replaced),
  // and the viewer's address as CloudFront saw it, written by a viewer-request function over
  // anything the viewer sent under that name. CloudFront-Viewer-Address itself cannot be forwarded
  // on the pass-through behaviour: a policy that adds CloudFront headers forwards Host too, which API
  // Gateway refuses, and Authorization cannot be listed instead (lib/http/client-address.ts reads both).
  const origin = new HttpOrigin(Fn.select(2, Fn.split("/", api.url)), {
    customHeaders: { [EDGE_HEADERS.secret]: edgeSecret.secretValue.unsafeUnwrap() },
  });
  const viewerAddress = new ViewerFunction(stack, "ViewerAddress", {
    comment: "Shotline: the viewer's address, for per-client limits",
    runtime: FunctionRuntime.JS_2_0,
    code: FunctionCode.fromInline(
      `function handler(event) { event.request.headers[${JSON.stringify(EDGE_HEADERS.viewer)}] = { value: event.viewer.ip }; return event.request; }`,
    ),
  });
  const functionAssociations = [{ function: viewerAddress, eventType: FunctionEventType.VIEWER_REQUEST }];
  // The signed links' behaviour forwards only its cache key, plus the viewer's address.
  const signedOrigin = new OriginRequestPolicy(stack, "SignedLinksOrigin", {
    comment: "Signed screenshot links: the viewer's address, for per-client limits",
    headerBehavior: OriginRequestHeaderBehavior.allowList(EDGE_HEADERS.viewer, "CloudFront-Viewer-Address"),
  });
  const signedLinks = new CachePolicy(stack, "SignedLinks", {
    comment: "Signed screenshot links: the full query is the key; the origin's max-age decides",
    queryStringBehavior: CacheQueryStringBehavior.all(),
    minTtl: Duration.seconds(0),
    defaultTtl: Duration.seconds(0),
    maxTtl: Duration.seconds(CDN_MAX_TTL_SECONDS),
    enableAcceptEncodingGzip: false,
    enableAcceptEncodingBrotli: false,
  });
  // On everything the CDN serves, cached or not: HTTPS only from now on, nothing sniffed, nothing framed.
  const securityHeaders = new ResponseHeadersPolicy(stack, "SecurityHeaders", {
    comment: "Shotline: HSTS, nosniff, no frames",
    securityHeadersBehavior: {
      strictTransportSecurity: { accessControlMaxAge: Duration.seconds(HSTS_MAX_AGE_SECONDS), includeSubdomains: false, override: true },
      contentTypeOptions: { override: true },
      frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
      // The pages say no-referrer themselves; everything else gets the browsers' default.
      referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.STRICT_ORIGIN_WHEN_CROSS_ORIGIN, override: false },
    },
  });
  const signed = routeById("signed-screenshot");
  const distribution = new Distribution(stack, "Cdn", {
    comment: "Shotline: signed screenshot links cached at the edge",
    priceClass: PriceClass.PRICE_CLASS_100,
    ...custom,
    defaultBehavior: {
      origin,
      allowedMethods: AllowedMethods.ALLOW_ALL,
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      responseHeadersPolicy: securityHeaders,
      functionAssociations,
    },
    additionalBehaviors: {
      [signed.path]: {
        origin,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        cachePolicy: signedLinks,
        originRequestPolicy: signedOrigin,
        responseHeadersPolicy: securityHeaders,
        functionAssociations,
      },
    },
  });
  stack.addOutputs({ CdnUrl: `https://${domain ?? distribution.distributionDomainName}` });
  return { distribution };
}
