package dev.sapwood.spark;

import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.trees.Origin;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import scala.collection.immutable.Seq;

/**
 * Spark 4.1 (Scala 2.13): our statements become a {@link SapwoodCommand};
 * everything else goes to the next parser. A line's adapter: Spark's
 * {@code ParserInterface} and {@code ParseException} differ between lines
 * (2.13's immutable {@code Seq}; 4.1's error has one {@code Origin}, of ten
 * fields, and the interface gained {@code parseRoutineParam}).
 */
final class SapwoodSqlParser implements ParserInterface {
    private final ParserInterface delegate;

    SapwoodSqlParser(ParserInterface delegate) {
        this.delegate = delegate;
    }

    @Override
    public LogicalPlan parsePlan(String sqlText) throws ParseException {
        Statement statement;
        try {
            statement = Grammar.parse(sqlText);
        } catch (SyntaxError e) {
            throw parseError(sqlText, e);
        }
        return statement == null ? delegate.parsePlan(sqlText) : new SapwoodCommand(statement);
    }

    /** Spark's PARSE_SYNTAX_ERROR: "Syntax error at or near 'x': hint", with the
     * line and position Spark's message and caret show. */
    static ParseException parseError(String sql, SyntaxError e) {
        Origin at = new Origin(Scala.some(e.line), Scala.some(e.position), Scala.none(),
                Scala.none(), Scala.none(), Scala.none(), Scala.none(), Scala.none(),
                Scala.none(), Scala.none());
        return new ParseException(Scala.some(sql), at, "PARSE_SYNTAX_ERROR",
                Scala.map("error", e.near, "hint", e.hint));
    }

    @Override
    public Expression parseExpression(String sqlText) throws ParseException {
        return delegate.parseExpression(sqlText);
    }

    @Override
    public TableIdentifier parseTableIdentifier(String sqlText) throws ParseException {
        return delegate.parseTableIdentifier(sqlText);
    }

    @Override
    public FunctionIdentifier parseFunctionIdentifier(String sqlText) throws ParseException {
        return delegate.parseFunctionIdentifier(sqlText);
    }

    @Override
    public Seq<String> parseMultipartIdentifier(String sqlText) throws ParseException {
        return delegate.parseMultipartIdentifier(sqlText);
    }

    @Override
    public LogicalPlan parseQuery(String sqlText) throws ParseException {
        return delegate.parseQuery(sqlText);
    }

    @Override
    public StructType parseRoutineParam(String sqlText) throws ParseException {
        return delegate.parseRoutineParam(sqlText);
    }

    @Override
    public StructType parseTableSchema(String sqlText) throws ParseException {
        return delegate.parseTableSchema(sqlText);
    }

    @Override
    public DataType parseDataType(String sqlText) throws ParseException {
        return delegate.parseDataType(sqlText);
    }
}
