package dev.sapwood.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

/** The view audit statements: a view's versions, its lineage, what reads a table,
 * and RESTORE (issue 27's restore: one new commit, audited). */
final class Audit {
    private static final String TREES = "/api/v2/trees/";

    private Audit() {
    }

    /** Every version the view has had on {@code ref}, newest first. */
    static List<Row> history(Versioning api, String ref, List<String> key) {
        String path = TREES + Versioning.ref(ref) + "/views/"
                + Versioning.name(CatalogTarget.keyPath(key)) + "/history";
        List<Row> out = new ArrayList<>();
        String token = null;
        do {
            JsonNode page = api.get(path, "maxRecords", "1000", "pageToken", token);
            for (JsonNode v : page.path("versions")) {
                JsonNode commit = v.path("commit");
                out.add(RowFactory.create(v.path("versionId").asInt(),
                        Json.instant(v.path("currentFrom")), Json.instant(v.path("currentUntil")),
                        Json.text(commit.path("hash")), Json.text(commit.path("author")),
                        Json.text(commit.path("message")), Json.dotted(v.path("key")),
                        Json.strings(v.path("representations")), origin(v.path("restoredFrom"))));
            }
            token = page.path("hasMore").asBoolean() ? Json.text(page.path("token")) : null;
        } while (token != null);
        Collections.reverse(out);
        return out;
    }

    /** One row per (output column, base-table column it comes from); a column with no
     * origin (a literal, {@code count(*)}) has one row with null origins. */
    static List<Row> lineage(Versioning api, String ref, List<String> key) {
        JsonNode answer = api.get(TREES + Versioning.ref(ref) + "/views/"
                + Versioning.name(CatalogTarget.keyPath(key)) + "/lineage");
        List<Row> out = new ArrayList<>();
        for (JsonNode c : answer.path("columns")) {
            String column = Json.text(c.path("name"));
            boolean derived = c.path("derived").asBoolean();
            if (c.path("origins").size() == 0) {
                out.add(RowFactory.create(column, derived, null, null));
            }
            for (JsonNode o : c.path("origins")) {
                out.add(RowFactory.create(column, derived, Json.dotted(o.path("table")),
                        Json.text(o.path("column"))));
            }
        }
        return out;
    }

    /** The views that read {@code key}, recursively, each with its depth, the object it
     * reads on the way and its status. */
    static List<Row> dependents(Versioning api, String ref, List<String> key) {
        JsonNode answer = api.get(TREES + Versioning.ref(ref) + "/contents/"
                + Versioning.name(CatalogTarget.keyPath(key)) + "/dependents");
        List<Row> out = new ArrayList<>();
        for (JsonNode d : answer.path("dependents")) {
            out.add(RowFactory.create(Json.dotted(d.path("key")), d.path("depth").asInt(),
                    Json.dotted(d.path("via")), Json.text(d.path("status"))));
        }
        return out;
    }

    /** The keys on the catalog's branch made as they were at a reference or, with
     * {@code TIMESTAMP t}, at the branch's own state at t: one new commit. */
    static List<Row> restore(Versioning api, CatalogTarget target, List<List<String>> keys,
                             Statement s) {
        if (target.pinned()) {
            throw Runner.failure(s + ": catalog '" + target.name + "' reads '" + target.ref
                    + "', not a branch head: RESTORE writes on a branch (USE REFERENCE one)");
        }
        String branch = target.ref;
        String source = s.fromInstant ? branch + "*" + s.from : s.from;
        String head = Runner.resolve(api, branch).path("hash").asText();
        List<Map<String, Object>> wanted = new ArrayList<>();
        for (List<String> key : keys) {
            wanted.add(Versioning.object("elements", key));
        }
        JsonNode result = api.call("POST", TREES + Versioning.name(branch) + "@" + head
                + "/history/restore", Versioning.object("source", source, "keys", wanted,
                "dryRun", false));
        List<Row> out = new ArrayList<>();
        for (JsonNode k : result.path("keys")) {
            JsonNode from = k.path("source");
            String hash = Json.text(from.path("hash"));
            out.add(RowFactory.create(Json.dotted(k.path("key")), Json.text(k.path("action")),
                    Json.text(k.path("type")), Json.text(from.path("ref"))
                            + (hash == null ? "" : " (commit " + short12(hash) + ")"),
                    Json.text(result.path("hash"))));
        }
        return out;
    }

    /** A restored version's origin: {@code version N of REF (commit HASH)}, as
     * spark/views.py writes it. */
    private static String origin(JsonNode restored) {
        if (!restored.isObject()) {
            return null;
        }
        return "version " + restored.path("versionId").asText() + " of "
                + restored.path("ref").asText() + " (commit "
                + short12(restored.path("commit").asText()) + ")";
    }

    private static String short12(String hash) {
        return hash.length() > 12 ? hash.substring(0, 12) : hash;
    }
}
