package dev.sapwood.spark;

import java.util.EnumMap;
import java.util.Map;
import org.apache.spark.sql.types.StructType;

/**
 * Result columns: Nessie's for Nessie's statements (code written for Nessie's
 * extension reads them unchanged), the Python helpers' DataFrame columns for
 * the view audit (spark/views.py, spark/lineage.py: SQL and Python give the
 * same frame).
 */
final class Schemas {
    static final String REFERENCE = "refType STRING, name STRING, hash STRING";
    static final String MERGE = "name STRING, hash STRING";
    static final String MERGE_DRY_RUN = "key STRING, outcome STRING, reasons ARRAY<STRING>";
    static final String LOG = "author STRING, committer STRING, hash STRING, message STRING, "
            + "signedOffBy STRING, authorTime TIMESTAMP, committerTime TIMESTAMP, "
            + "properties MAP<STRING, STRING>";
    static final String DIFF = "key STRING, change STRING, type STRING";
    static final String HISTORY = "version_id INT, current_from TIMESTAMP, "
            + "current_until TIMESTAMP, commit STRING, author STRING, message STRING, "
            + "key STRING, sql MAP<STRING, STRING>, restored_from STRING";
    static final String LINEAGE = "column STRING, derived BOOLEAN, origin_table STRING, "
            + "origin_column STRING";
    static final String DEPENDENTS = "view STRING, depth INT, reads STRING, status STRING";
    static final String RESTORE = "key STRING, action STRING, type STRING, source STRING, "
            + "hash STRING";

    private static final Map<Statement.Kind, StructType> BY_KIND =
            new EnumMap<>(Statement.Kind.class);

    static {
        StructType refs = StructType.fromDDL(REFERENCE);
        BY_KIND.put(Statement.Kind.CREATE_REFERENCE, refs);
        BY_KIND.put(Statement.Kind.DROP_REFERENCE, StructType.fromDDL("status STRING"));
        BY_KIND.put(Statement.Kind.USE_REFERENCE, refs);
        BY_KIND.put(Statement.Kind.LIST_REFERENCES, refs);
        BY_KIND.put(Statement.Kind.SHOW_REFERENCE, refs);
        BY_KIND.put(Statement.Kind.ASSIGN_REFERENCE, refs);
        BY_KIND.put(Statement.Kind.MERGE_BRANCH, StructType.fromDDL(MERGE));
        BY_KIND.put(Statement.Kind.SHOW_LOG, StructType.fromDDL(LOG));
        BY_KIND.put(Statement.Kind.SHOW_DIFF, StructType.fromDDL(DIFF));
        BY_KIND.put(Statement.Kind.VIEW_HISTORY, StructType.fromDDL(HISTORY));
        BY_KIND.put(Statement.Kind.VIEW_LINEAGE, StructType.fromDDL(LINEAGE));
        BY_KIND.put(Statement.Kind.VIEW_DEPENDENTS, StructType.fromDDL(DEPENDENTS));
        BY_KIND.put(Statement.Kind.RESTORE, StructType.fromDDL(RESTORE));
    }

    private Schemas() {
    }

    static StructType of(Statement s) {
        if (s.kind == Statement.Kind.MERGE_BRANCH && s.dryRun) {
            return StructType.fromDDL(MERGE_DRY_RUN);
        }
        return BY_KIND.get(s.kind);
    }
}
