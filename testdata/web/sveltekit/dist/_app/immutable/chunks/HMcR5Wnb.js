import{br as a}from"./tMnpxgHh.js";a();
