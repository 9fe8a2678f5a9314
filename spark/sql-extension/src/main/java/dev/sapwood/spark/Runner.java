package dev.sapwood.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.spark.QueryContext;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;

/**
 * Runs a statement against the versioning API of its catalog's server and
 * returns its rows. A refusal (a missing reference, a conflict, a privilege the
 * principal lacks) is an AnalysisException naming the statement and carrying
 * the server's reason, the conflicting keys and the status.
 */
final class Runner {
    private static final String TREES = "/api/v2/trees/";
    private static final String PAGE = "1000";
    /** How the server's refusal of a per-key mode for a key the merge does not change starts. */
    private static final String MODES_FIELD = "keyMergeModes";

    private final SparkSession session;

    Runner(SparkSession session) {
        this.session = session;
    }

    List<Row> run(Statement s) {
        CatalogTarget target = CatalogTarget.of(session, s.catalog);
        Versioning api = target.client();
        try {
            switch (s.kind) {
                case CREATE_REFERENCE: return create(s, target, api);
                case DROP_REFERENCE: return drop(s, api);
                case USE_REFERENCE: return use(s, target, api);
                case LIST_REFERENCES: return list(api);
                case SHOW_REFERENCE: return rows(reference(resolve(api, target.ref)));
                case ASSIGN_REFERENCE: return assign(s, api);
                case MERGE_BRANCH: return merge(s, target, api);
                case SHOW_LOG: return log(s, target, api);
                case SHOW_DIFF: return diff(s, api);
                case VIEW_HISTORY: return Audit.history(api, target.ref, key(s, target));
                case VIEW_LINEAGE: return Audit.lineage(api, target.ref, key(s, target));
                case VIEW_DEPENDENTS: return Audit.dependents(api, target.ref, key(s, target));
                default: return Audit.restore(api, target, keys(s, target), s);
            }
        } catch (ApiError e) {
            throw failure(s + ": " + e.describe());
        }
    }

    private List<Row> create(Statement s, CatalogTarget target, Versioning api) {
        String from = s.from != null ? s.from : target.ref;
        JsonNode source = resolve(api, s.at != null ? s.at.on(base(from)) : from);
        Map<String, Object> body = Versioning.object("type", source.path("type").asText(),
                "name", source.path("name").asText(), "hash", source.path("hash").asText());
        try {
            return rows(reference(api.call("POST", "/api/v2/trees", body, "name", s.name,
                    "type", s.refType).path("reference")));
        } catch (ApiError e) {
            if (s.ifFlag && e.code.equals("REFERENCE_ALREADY_EXISTS")) {
                return rows(reference(resolve(api, s.name)));
            }
            throw e;
        }
    }

    private List<Row> drop(Statement s, Versioning api) {
        try {
            String hash = resolve(api, s.name).path("hash").asText();
            api.call("DELETE", TREES + Versioning.name(s.name) + "@" + hash, null,
                    "type", s.refType);
        } catch (ApiError e) {
            if (!(s.ifFlag && e.code.equals("REFERENCE_NOT_FOUND"))) {
                throw e;
            }
        }
        return rows(RowFactory.create("OK"));
    }

    private List<Row> use(Statement s, CatalogTarget target, Versioning api) {
        String spec = s.at != null ? s.at.on(s.name) : s.name;
        Row row = reference(resolve(api, spec));
        target.use(spec);
        return rows(row);
    }

    private List<Row> list(Versioning api) {
        List<Row> out = new ArrayList<>();
        String token = null;
        do {
            JsonNode page = api.get("/api/v2/trees", "maxRecords", PAGE, "pageToken", token);
            for (JsonNode r : page.path("references")) {
                out.add(reference(r));
            }
            token = page.path("hasMore").asBoolean() ? Json.text(page.path("token")) : null;
        } while (token != null);
        return out;
    }

    private List<Row> assign(Statement s, Versioning api) {
        String to = s.to != null ? s.to : defaultBranch(api);
        JsonNode target = resolve(api, s.at != null ? s.at.on(base(to)) : to);
        String hash = resolve(api, s.name).path("hash").asText();
        Map<String, Object> body = Versioning.object("type", target.path("type").asText(),
                "name", target.path("name").asText(), "hash", target.path("hash").asText());
        return rows(reference(api.call("PUT", TREES + Versioning.name(s.name) + "@" + hash,
                body, "type", s.refType).path("reference")));
    }

    private List<Row> merge(Statement s, CatalogTarget target, Versioning api) {
        String source = s.name != null ? s.name : target.refName();
        String into = s.into != null ? s.into : defaultBranch(api);
        // The merge route takes its author from the body (the Iceberg routes and restore
        // from the header): the catalog's author header names the merge too.
        String author = target.header("Sapwood-Commit-Author");
        // FORCE (k) and DROP (k): per-key modes; the server refuses (400) a key the
        // merge does not change, naming it.
        List<Map<String, Object>> modes = new ArrayList<>();
        for (List<String> k : s.force) {
            modes.add(Versioning.object("key", Versioning.object("elements", k),
                    "mergeBehavior", "FORCE"));
        }
        for (List<String> k : s.drop) {
            modes.add(Versioning.object("key", Versioning.object("elements", k),
                    "mergeBehavior", "DROP"));
        }
        // One request: the server resolves the source's ref spec and lands on the
        // target's head as it finds it (a bare branch name), planning the merge once.
        Map<String, Object> body = Versioning.object(
                "fromRefName", s.at != null ? s.at.on(source) : source,
                "dryRun", s.dryRun, "returnConflictAsResult", s.dryRun,
                "keyMergeModes", modes,
                "commitMeta", author == null ? null : Versioning.object("author", author));
        JsonNode result;
        try {
            result = api.call("POST", TREES + Versioning.name(into) + "/history/merge", body);
        } catch (ApiError e) {
            String said = e.getMessage();
            if (said != null && said.startsWith(MODES_FIELD)) {
                // The API names its field; the statement's words are FORCE and DROP.
                throw new ApiError(e.status, e.code, "FORCE/DROP" + said.substring(
                        MODES_FIELD.length()), e.conflicts, e.keys);
            }
            if (e.keys.isEmpty()) {
                throw e;
            }
            // A refused merge says how to resolve its keys, as a statement to run.
            throw new ApiError(e.status, e.code, e.getMessage() + "; "
                    + Resolve.hint(s, base(source), into, e.keys), e.conflicts, e.keys);
        }
        if (!s.dryRun) {
            return rows(RowFactory.create(into, result.path("resultantTargetHash").asText()));
        }
        List<Row> out = new ArrayList<>();
        for (JsonNode d : result.path("details")) {
            JsonNode conflict = d.path("conflict");
            List<String> reasons = new ArrayList<>();
            if (conflict.isObject()) {
                String key = Json.dotted(d.path("key"));
                reasons.add(conflict.path("conflictType").asText() + ": "
                        + conflict.path("message").asText());
                // A view's SQL per dialect: the target's to the source's, as a diff.
                d.path("conflictDetails").path("sqlDiff").properties().forEach(
                        e -> reasons.add(e.getKey() + " diff:\n" + e.getValue().asText()));
                if (d.path("outcome").asText().equals("CONFLICT")) {
                    reasons.add(Resolve.hint(s, base(source), into,
                            Collections.singletonList(key)));
                }
            }
            out.add(RowFactory.create(Json.dotted(d.path("key")), d.path("outcome").asText(),
                    reasons.toArray(new String[0])));
        }
        for (JsonNode v : result.path("invalidatedViews")) {
            out.add(RowFactory.create(Json.dotted(v.path("key")), "INVALIDATED",
                    Json.list(v.path("reasons")).toArray(new String[0])));
        }
        return out;
    }

    private List<Row> log(Statement s, CatalogTarget target, Versioning api) {
        String ref = s.name != null ? s.name : target.ref;
        String spec = s.at != null ? s.at.on(base(ref)) : ref;
        List<Row> out = new ArrayList<>();
        String token = null;
        do {
            JsonNode page = api.get(TREES + Versioning.ref(spec) + "/history",
                    "maxRecords", PAGE, "pageToken", token);
            for (JsonNode e : page.path("logEntries")) {
                JsonNode m = e.path("commitMeta");
                List<String> authors = Json.list(m.path("authors"));
                List<String> signed = Json.list(m.path("allSignedOffBy"));
                out.add(RowFactory.create(authors.isEmpty() ? null : String.join(", ", authors),
                        Json.text(m.path("committer")), Json.text(m.path("hash")),
                        Json.text(m.path("message")),
                        signed.isEmpty() ? null : String.join(", ", signed),
                        Json.instant(m.path("authorTime")), Json.instant(m.path("commitTime")),
                        Json.strings(m.path("allProperties"))));
            }
            token = page.path("hasMore").asBoolean() ? Json.text(page.path("token")) : null;
        } while (token != null);
        return out;
    }

    private List<Row> diff(Statement s, Versioning api) {
        List<Row> out = new ArrayList<>();
        String token = null;
        do {
            JsonNode page = api.get(TREES + Versioning.ref(s.from) + "/diff/"
                    + Versioning.ref(s.to), "maxRecords", PAGE, "pageToken", token);
            for (JsonNode d : page.path("diffs")) {
                JsonNode before = d.path("from");
                JsonNode after = d.path("to");
                String change = before.isNull() || before.isMissingNode() ? "added"
                        : after.isNull() || after.isMissingNode() ? "removed" : "changed";
                JsonNode content = after.isObject() ? after : before;
                out.add(RowFactory.create(Json.dotted(d.path("key")), change,
                        content.path("type").asText()));
            }
            token = page.path("hasMore").asBoolean() ? Json.text(page.path("token")) : null;
        } while (token != null);
        return out;
    }

    /** A one-part name is in the session's current namespace when the statement's
     * catalog is the current one, as Spark resolves a table's name. */
    private List<String> key(Statement s, CatalogTarget target) {
        return keys(s, target).get(0);
    }

    private List<List<String>> keys(Statement s, CatalogTarget target) {
        List<List<String>> out = new ArrayList<>();
        for (List<String> key : s.keys) {
            if (key.size() == 1 && current(target)) {
                List<String> full = new ArrayList<>(Arrays.asList(
                        session.sessionState().catalogManager().currentNamespace()));
                full.addAll(key);
                out.add(full);
            } else {
                out.add(key);
            }
        }
        return out;
    }

    private boolean current(CatalogTarget target) {
        return session.sessionState().catalogManager().currentCatalog().name()
                .equals(target.name);
    }

    static JsonNode resolve(Versioning api, String spec) {
        return api.get(TREES + Versioning.ref(spec)).path("reference");
    }

    private static String defaultBranch(Versioning api) {
        return api.get("/api/v2/config").path("defaultBranch").asText("main");
    }

    /** {@code etl} of {@code etl}, {@code etl@ab12} or {@code etl*T}. */
    private static String base(String spec) {
        return spec.split("[@*~^]", 2)[0];
    }

    private static Row reference(JsonNode r) {
        return RowFactory.create(Json.text(r.path("type")), Json.text(r.path("name")),
                Json.text(r.path("hash")));
    }

    static List<Row> rows(Row... rows) {
        return new ArrayList<>(Arrays.asList(rows));
    }

    /** Spark's AnalysisException (a checked exception to Java, thrown as Scala does). */
    static RuntimeException failure(String message) {
        AnalysisException e = new AnalysisException(message, Scala.none(), Scala.none(),
                Scala.none(), Scala.none(), Scala.map(), new QueryContext[0]);
        return Runner.<RuntimeException>sneaky(e);
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException sneaky(Throwable e) throws E {
        throw (E) e;
    }
}
