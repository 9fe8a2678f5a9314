{{ config(materialized='view') }}
select count(*) as orders, sum(amount) as total from {{ ref('big_orders') }}
