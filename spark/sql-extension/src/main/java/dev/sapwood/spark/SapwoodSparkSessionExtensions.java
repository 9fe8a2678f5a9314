package dev.sapwood.spark;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import scala.runtime.AbstractFunction1;
import scala.runtime.AbstractFunction2;
import scala.runtime.BoxedUnit;

/**
 * Sapwood's Spark SQL statements: Nessie's branch statements and the view
 * audit, run against the versioning API of the server a Spark catalog points at.
 *
 * <pre>
 * spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions,dev.sapwood.spark.SapwoodSparkSessionExtensions
 * </pre>
 * Listed after Iceberg's, its parser is the outermost: it takes its own
 * statements and hands every other one to Iceberg's, unread past its first word.
 */
public final class SapwoodSparkSessionExtensions
        extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {

    @Override
    public BoxedUnit apply(SparkSessionExtensions extensions) {
        extensions.injectParser(new Builder());
        return BoxedUnit.UNIT;
    }

    private static final class Builder
            extends AbstractFunction2<SparkSession, ParserInterface, ParserInterface> {
        @Override
        public ParserInterface apply(SparkSession session, ParserInterface delegate) {
            return new SapwoodSqlParser(delegate);
        }
    }
}
