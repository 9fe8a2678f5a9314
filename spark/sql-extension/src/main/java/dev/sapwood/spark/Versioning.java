package dev.sapwood.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Sapwood's versioning API ({@code /api/v2}) over HTTP, as the catalog's own
 * principal: its bearer token ({@code token}), or a token for its credential
 * ({@code id:secret}) from the OAuth2 endpoint Iceberg's client uses too, and
 * its {@code header.*} properties on every request (so a commit author set
 * for the catalog names the branch operations too).
 */
final class Versioning {
    // HTTP/1.1: the client's default, HTTP/2, sends "Upgrade: h2c" on plain
    // http://, which the server does not speak and logs two warnings about.
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    /** Tokens by token endpoint and credential, until shortly before they expire. */
    private static final Map<String, Token> TOKENS = new ConcurrentHashMap<>();

    private static final class Token {
        final String value;
        final long renewAtMs;

        Token(String value, long renewAtMs) {
            this.value = value;
            this.renewAtMs = renewAtMs;
        }
    }

    final String root;
    private final Map<String, String> headers;
    private final String token;
    private final String credential;
    private final String tokenUri;
    private final String scope;

    Versioning(String root, Map<String, String> headers, String token, String credential,
               String tokenUri, String scope) {
        this.root = root;
        this.headers = headers;
        this.token = token;
        this.credential = credential;
        this.tokenUri = tokenUri;
        this.scope = scope;
    }

    JsonNode get(String path, String... query) {
        return call("GET", path, null, query);
    }

    JsonNode call(String method, String path, Object body, String... query) {
        String url = root + path + queryString(query);
        ApiError refused = null;
        for (int attempt = 0; attempt < 2; attempt++) {
            HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT);
            headers.forEach(req::header);
            String bearer = bearer(attempt > 0);
            if (bearer != null) {
                req.header("Authorization", "Bearer " + bearer);
            }
            if (body != null) {
                req.header("Content-Type", "application/json");
                req.method(method, HttpRequest.BodyPublishers.ofString(write(body)));
            } else {
                req.method(method, HttpRequest.BodyPublishers.noBody());
            }
            HttpResponse<String> resp = send(req.build());
            JsonNode json = read(resp.body());
            if (resp.statusCode() < 300) {
                return json;
            }
            refused = ApiError.of(resp.statusCode(), json, resp.body());
            // A token the server no longer takes (revoked, or its key rotated): one more try
            // with a new one.
            if (resp.statusCode() != 401 || credential == null || token != null) {
                break;
            }
        }
        throw refused;
    }

    private String bearer(boolean renew) {
        if (token != null) {
            return token;
        }
        if (credential == null) {
            return null;
        }
        String cacheKey = tokenUri + "\n" + credential;
        Token cached = TOKENS.get(cacheKey);
        if (!renew && cached != null && cached.renewAtMs > System.currentTimeMillis()) {
            return cached.value;
        }
        int colon = credential.indexOf(':');
        String id = colon < 0 ? "" : credential.substring(0, colon);
        String secret = colon < 0 ? credential : credential.substring(colon + 1);
        String form = "grant_type=client_credentials&client_id=" + form(id)
                + "&client_secret=" + form(secret) + "&scope=" + form(scope);
        HttpRequest req = HttpRequest.newBuilder(URI.create(tokenUri)).timeout(TIMEOUT)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build();
        HttpResponse<String> resp = send(req);
        JsonNode json = read(resp.body());
        if (resp.statusCode() >= 300 || json == null || !json.hasNonNull("access_token")) {
            String why = json == null ? resp.body()
                    : json.path("error_description").asText(json.path("error").asText(
                            resp.body()));
            throw new ApiError(resp.statusCode(), "", "the catalog's credential was refused "
                    + "at " + tokenUri + ": " + why, new java.util.ArrayList<>());
        }
        long lifeMs = json.path("expires_in").asLong(3600) * 1000;
        Token fresh = new Token(json.get("access_token").asText(),
                System.currentTimeMillis() + lifeMs * 9 / 10);
        TOKENS.put(cacheKey, fresh);
        return fresh.value;
    }

    private HttpResponse<String> send(HttpRequest req) {
        try {
            return HTTP.send(req, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new ApiError(0, "", "cannot reach the catalog at " + root + ": " + e,
                    new java.util.ArrayList<>());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiError(0, "", "interrupted while calling " + root,
                    new java.util.ArrayList<>());
        }
    }

    private static JsonNode read(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        try {
            return Json.MAPPER.readTree(text);
        } catch (IOException e) {
            return null;
        }
    }

    private static String write(Object body) {
        try {
            return Json.MAPPER.writeValueAsString(body);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String queryString(String... pairs) {
        StringBuilder out = new StringBuilder();
        for (int k = 0; k + 1 < pairs.length; k += 2) {
            if (pairs[k + 1] == null) {
                continue;
            }
            out.append(out.length() == 0 ? '?' : '&').append(form(pairs[k])).append('=')
                    .append(form(pairs[k + 1]));
        }
        return out.toString();
    }

    private static String form(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    /** A path segment: percent-encoded but for letters, digits, {@code _.-~} and
     * {@code safe} (the Python helpers' {@code quote(s, safe)}). */
    static String segment(String value, String safe) {
        StringBuilder out = new StringBuilder();
        for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || "_.-~".indexOf(c) >= 0 || (c < 128 && safe.indexOf(c) >= 0)) {
                out.append(c);
            } else {
                out.append('%').append(String.format("%02X", b & 0xff));
            }
        }
        return out.toString();
    }

    /** A reference spec in a path ({@code main}, {@code etl@ab12}, {@code main*T},
     * {@code main~1}); a {@code /} in a name is sent as {@code %2F}. */
    static String ref(String spec) {
        return segment(spec, "@*~^:");
    }

    /** A name alone (as in {@code name@expectedHash}). */
    static String name(String name) {
        return segment(name, "");
    }

    static Map<String, Object> object(Object... keysAndValues) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int k = 0; k + 1 < keysAndValues.length; k += 2) {
            if (keysAndValues[k + 1] != null) {
                out.put((String) keysAndValues[k], keysAndValues[k + 1]);
            }
        }
        return out;
    }
}
