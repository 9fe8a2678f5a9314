package dev.sapwood.spark;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A Spark catalog of the session, seen as Sapwood: the server and the reference
 * its {@code uri} names ({@code <server>/iceberg/<ref>}), and its principal,
 * all from the catalog's own properties ({@code spark.sql.catalog.<c>.*}).
 */
final class CatalogTarget {
    private static final String ICEBERG = "/iceberg";

    final String name;
    final String root;
    /** The reference spec the catalog reads: {@code main}, {@code etl}, {@code main*T}. */
    final String ref;
    final Map<String, String> properties;
    private final SparkSession session;

    private CatalogTarget(SparkSession session, String name, String root, String ref,
                          Map<String, String> properties) {
        this.session = session;
        this.name = name;
        this.root = root;
        this.ref = ref;
        this.properties = properties;
    }

    /** Catalog {@code name}, or the session's current catalog when null. */
    static CatalogTarget of(SparkSession session, String name) {
        String catalog = name != null ? name
                : session.sessionState().catalogManager().currentCatalog().name();
        String prefix = "spark.sql.catalog." + catalog + ".";
        Map<String, String> props = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : Scala.java(session.conf().getAll()).entrySet()) {
            if (e.getKey().startsWith(prefix)) {
                props.put(e.getKey().substring(prefix.length()), e.getValue());
            }
        }
        String uri = props.get("uri");
        int at = uri == null ? -1 : uri.indexOf(ICEBERG);
        if (at < 0) {
            String which = name != null ? "Catalog '" + catalog + "'"
                    : "The current catalog '" + catalog + "'";
            throw Runner.failure(which + " is not a Sapwood catalog (its "
                    + prefix + "uri is " + (uri == null ? "not set" : "'" + uri + "'")
                    + ", not <server>/iceberg/<ref>)"
                    + (name == null ? ": name one with IN <catalog>" : ""));
        }
        String tail = uri.substring(at + ICEBERG.length()).replaceAll("^/+|/+$", "");
        String ref = tail.isEmpty() ? "main" : decode(tail);
        return new CatalogTarget(session, catalog, uri.substring(0, at), ref, props);
    }

    Versioning client() {
        Map<String, String> headers = new LinkedHashMap<>();
        properties.forEach((k, v) -> {
            if (k.startsWith("header.")) {
                headers.put(k.substring("header.".length()), v);
            }
        });
        String tokenUri = properties.getOrDefault("oauth2-server-uri",
                root + ICEBERG + "/v1/oauth/tokens");
        return new Versioning(root, headers, properties.get("token"),
                properties.get("credential"), tokenUri,
                properties.getOrDefault("scope", "catalog"));
    }

    /** The catalog's {@code header.<name>} property (names compared as HTTP does). */
    String header(String name) {
        for (Map.Entry<String, String> e : properties.entrySet()) {
            if (e.getKey().equalsIgnoreCase("header." + name)) {
                return e.getValue();
            }
        }
        return null;
    }

    /** The branch (or tag) name the catalog reads, without {@code @hash} or {@code *T}. */
    String refName() {
        int cut = ref.length();
        for (char c : new char[] {'@', '*', '~', '^'}) {
            int k = ref.indexOf(c);
            if (k >= 0 && k < cut) {
                cut = k;
            }
        }
        return ref.substring(0, cut);
    }

    boolean pinned() {
        return !refName().equals(ref);
    }

    /**
     * Points the catalog at {@code spec}, in place: its {@code uri} property
     * changes and the catalog object Spark holds is initialised again with
     * it, so every later statement of the session (views' base tables too)
     * resolves there. A catalog not loaded yet loads with the new property.
     */
    void use(String spec) {
        String uri = root + ICEBERG + "/" + Versioning.segment(spec, "@*~^:");
        session.conf().set("spark.sql.catalog." + name + ".uri", uri);
        CatalogManager manager = session.sessionState().catalogManager();
        CatalogPlugin plugin = manager.catalog(name);
        Map<String, String> options = new HashMap<>(properties);
        options.put("uri", uri);
        plugin.initialize(name, new CaseInsensitiveStringMap(options));
    }

    /** Nessie's path form of a key: elements joined by dots, escaped from the first
     * element holding {@code . / \ %} on (core/keys.py). */
    static String keyPath(java.util.List<String> elements) {
        int first = -1;
        for (int k = 0; k < elements.size(); k++) {
            if (elements.get(k).matches(".*[./\\\\%].*")) {
                first = k;
                break;
            }
        }
        if (first < 0) {
            return String.join(".", elements);
        }
        String plain = String.join(".", elements.subList(0, first));
        StringBuilder escaped = new StringBuilder();
        for (int k = first; k < elements.size(); k++) {
            if (k > first) {
                escaped.append("..");
            }
            for (char c : elements.get(k).toCharArray()) {
                escaped.append(c == '.' ? "._" : c == '/' ? ".{" : c == '\\' ? ".}"
                        : c == '%' ? ".[" : String.valueOf(c));
            }
        }
        return plain.isEmpty() ? "." + escaped : plain + ".." + escaped;
    }

    /** Percent-decoding that leaves {@code +} alone (a URI path, not a form). */
    private static String decode(String text) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        for (int k = 0; k < bytes.length; k++) {
            int hex = k + 2 < bytes.length ? hex(bytes[k + 1], bytes[k + 2]) : -1;
            if (bytes[k] == '%' && hex >= 0) {
                out.write(hex);
                k += 2;
            } else {
                out.write(bytes[k]);
            }
        }
        return new String(out.toByteArray(), StandardCharsets.UTF_8);
    }

    private static int hex(byte high, byte low) {
        int h = Character.digit(high, 16);
        int l = Character.digit(low, 16);
        return h < 0 || l < 0 ? -1 : h * 16 + l;
    }
}
