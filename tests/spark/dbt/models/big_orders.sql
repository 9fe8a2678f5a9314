{{ config(materialized='table') }}
select id, amount from {{ source('shop', 'orders') }} where amount > 5
