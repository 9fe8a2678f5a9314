package dev.sapwood.spark;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.plans.logical.Command;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Statistics;
import org.apache.spark.sql.catalyst.plans.logical.Statistics$;
import org.apache.spark.sql.catalyst.trees.LeafLike;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.execution.command.LeafRunnableCommand;
import org.apache.spark.sql.execution.command.RunnableCommand;
import scala.Enumeration;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;

/**
 * Spark 4.1 (Scala 2.13): a statement as a Spark command. It runs when Spark
 * executes the plan (for a command, once, inside {@code spark.sql(...)}), never
 * while parsing, and EXPLAIN of it does not run it. What a Scala case class
 * would get from the compiler is written out here: the product (one element:
 * the statement, which is also what {@code makeCopy} passes back), the leaf's
 * children, and the command's traits' members. A line's adapter: these
 * members' types are Scala
 * 2.13's immutable {@code Seq} and {@code IndexedSeq}; Spark 3.5's are 2.12's
 * {@code scala.collection} ones.
 */
public final class SapwoodCommand extends LogicalPlan implements LeafRunnableCommand {
    private static final long serialVersionUID = 1L;

    private final Statement statement;
    private final Seq<Attribute> output;
    private Seq<Enumeration.Value> nodePatterns;

    @SuppressWarnings("unchecked")
    public SapwoodCommand(Statement statement) {
        this.statement = statement;
        // Made once: the attributes' ids must not change between calls.
        this.output = (Seq<Attribute>) (Seq<?>) DataTypeUtils.toAttributes(
                Schemas.of(statement));
        Command.$init$(this);
        LeafLike.$init$(this);
        RunnableCommand.$init$(this);
    }

    @Override
    public Seq<Row> run(SparkSession session) {
        return Scala.seq(new Runner(session).run(statement));
    }

    @Override
    public Seq<Attribute> output() {
        return output;
    }

    @Override
    public Seq<LogicalPlan> children() {
        return Scala.seq(java.util.Collections.<LogicalPlan>emptyList());
    }

    @Override
    public LogicalPlan mapChildren(scala.Function1<LogicalPlan, LogicalPlan> f) {
        return this;
    }

    @Override
    public LogicalPlan withNewChildrenInternal(IndexedSeq<LogicalPlan> newChildren) {
        return this;
    }

    @Override
    public AttributeSet producedAttributes() {
        return outputSet();
    }

    @Override
    public Statistics stats() {
        return Statistics$.MODULE$.DUMMY();
    }

    @Override
    public Seq<Enumeration.Value> nodePatterns() {
        return nodePatterns;
    }

    @Override
    public void org$apache$spark$sql$catalyst$plans$logical$Command$_setter_$nodePatterns_$eq(
            Seq<Enumeration.Value> patterns) {
        this.nodePatterns = patterns;
    }

    @Override
    public String nodeName() {
        return "SapwoodCommand";
    }

    @Override
    public int productArity() {
        return 1;
    }

    @Override
    public Object productElement(int n) {
        if (n != 0) {
            throw new IndexOutOfBoundsException(String.valueOf(n));
        }
        return statement;
    }

    @Override
    public boolean canEqual(Object that) {
        return that instanceof SapwoodCommand;
    }

    @Override
    public boolean equals(Object that) {
        return that instanceof SapwoodCommand && ((SapwoodCommand) that).statement == statement;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(statement);
    }
}
