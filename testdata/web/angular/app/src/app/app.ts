import { Component } from '@angular/core';
import { RouterLink, RouterOutlet } from '@angular/router';

@Component({
  selector: 'app-root',
  imports: [RouterOutlet, RouterLink],
  template: `<nav><a routerLink="/">home</a> <a routerLink="/report">report</a></nav><router-outlet />`,
})
export class App {}
